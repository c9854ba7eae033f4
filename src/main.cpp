#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <iostream>

#include "hfta/core/cli.h"
#include "hfta/fusion/host_allocator.h"

namespace {

// Standard input, output and error, where the caller closed them (`>&-`),
// are /dev/null opened for reading: otherwise the first files opened take
// their numbers, and what is printed lands in the lock file (its pid lost) or
// a checkpoint. Writes to them still fail, as to a closed stream: `export`
// with nowhere to write exits 1.
void open_closed_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  open_closed_standard_streams();
  // A write past the file-size limit (`ulimit -f`) fails with EFBIG, said and
  // resumable as a full disk is, instead of killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  hfta::fusion::configure_host_allocator();
  try {
    return hfta::core::run_cli(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "hfta-tune: error: " << e.what() << "\n";
    return hfta::core::kExitFailure;
  }
}
