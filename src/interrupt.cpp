#include "hfta/core/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <limits>

namespace hfta::core {
namespace {

std::atomic<int> received{0};
// steady_clock ticks; max: no limit.
std::atomic<std::int64_t> deadline{std::numeric_limits<std::int64_t>::max()};

std::int64_t now() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

// Whether standard error is a terminal (set before the handler is installed):
// there the note starts a line of its own below the progress line and the ^C
// the terminal echoed; into a file or pipe, no empty line before it.
bool stderr_terminal = false;

extern "C" void on_signal(int sig) {
  received = sig;
  // Past its soft limit the kernel sends SIGXCPU again each CPU second (a
  // fraction of one with several threads): the second must not kill it
  // before the checkpoint. (sigaction may be called in a handler.)
  if (sig == SIGXCPU) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXCPU, &ignore, nullptr);
  }
  static const char note[] = "\nhfta-tune: stopping after a checkpoint (once more to kill at once)\n";
  const std::size_t skip = stderr_terminal ? 0 : 1;
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, note + skip, sizeof note - 1 - skip);
}

}  // namespace

void catch_interrupts() {
  stderr_terminal = ::isatty(STDERR_FILENO) == 1;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // A write the signal lands in goes on (no half-written file); the next
  // signal gets the default action: killed at once.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  // Each stops it, unless it was ignored when the process began: under
  // `nohup` a hang-up (the SSH session closed) leaves it training, and so
  // does a terminal's Ctrl-C a shell script's background job (`run ... &`,
  // whose SIGINT the shell ignores).
  // SIGUSR1 and SIGXCPU warn of a kill to come: a batch system's time limit
  // (Slurm's --signal=USR1@60, as PyTorch Lightning checkpoints on), and
  // `ulimit -S -t`'s soft CPU-time limit.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGXCPU}) {
    struct sigaction before {};
    if (::sigaction(sig, nullptr, &before) == 0 && before.sa_handler != SIG_IGN) ::sigaction(sig, &action, nullptr);
  }
  // Output piped into a reader that quit (`| head`, a closed pager) is no
  // reason to stop training: the writes fail, and the sweep goes on.
  ::signal(SIGPIPE, SIG_IGN);
}

void stop_after(double seconds) {
  using ticks = std::chrono::steady_clock::duration;
  // Beyond a century is no limit (and past about 290 years the ticks overflow,
  // which put the deadline in the past).
  const bool limited = seconds > 0 && seconds < 100 * 365.25 * 86400;
  deadline = limited ? now() + std::chrono::duration_cast<ticks>(std::chrono::duration<double>(seconds)).count()
                     : std::numeric_limits<std::int64_t>::max();
}

void time_is_up() { deadline = std::numeric_limits<std::int64_t>::min(); }

bool signalled() { return received != 0; }

bool time_limit_reached() { return !signalled() && now() >= deadline; }

bool interrupted() { return signalled() || now() >= deadline; }

const char* interrupt_name() {
  switch (received.load()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGXCPU: return "SIGXCPU";
    default: return time_limit_reached() ? "the time limit" : "";
  }
}

void stop_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

}  // namespace hfta::core
