// The hfta-tune command line: verbs, flags and exit codes (see DESIGN.md).
#pragma once

#include <iosfwd>

namespace hfta::core {

/// Exit codes of hfta-tune.
enum ExitCode : int {
  kExitOk = 0,       ///< success
  kExitFailure = 1,  ///< a failure while running; the experiment directory stays resumable
  kExitUsage = 2,    ///< bad usage or an invalid sweep; nothing was written
};

/// Parses the arguments, runs the verb, and returns the exit code.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace hfta::core
