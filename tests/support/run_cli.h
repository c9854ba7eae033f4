// Test support: runs the hfta-tune binary as a user would, and reads what it wrote.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace hfta::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

/// A file's bytes ("" where it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `hfta-tune ARGS` through the shell (ARGS as typed), its output caught in
/// files under `scratch`, which it leaves as it was.
inline CliResult run_cli(const std::string& args, const std::string& scratch) {
  const std::string out = scratch + "/stdout", err = scratch + "/stderr";
  const std::string cmd = std::string(HFTA_TUNE_BINARY) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

}  // namespace hfta::test
