#include <iostream>

#include "hfta/core/cli.h"
#include "hfta/fusion/host_allocator.h"

int main(int argc, char** argv) {
  hfta::fusion::configure_host_allocator();
  try {
    return hfta::core::run_cli(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "hfta-tune: error: " << e.what() << "\n";
    return hfta::core::kExitFailure;
  }
}
