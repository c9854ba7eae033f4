// hfta-tune export: every trial and the best one, as JSON or CSV.
#include "verbs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/sweep_json.h"

namespace hfta::core::verbs {
namespace {

// The file an export to `path` writes: through a link to the file it names
// (not over the link), which may not exist yet.
std::string export_target(const std::string& path) {
  std::error_code ec;
  std::filesystem::path named = path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(named, ec))) {
    const auto to = std::filesystem::read_symlink(named, ec);
    if (!ec) named = to.is_absolute() ? to : named.parent_path() / to;
  }
  const auto target = std::filesystem::weakly_canonical(named, ec);
  return ec ? path : target.string();
}

// The experiment's own file (or folder) that `path` would replace, if any:
// exporting over results.json would leave a CSV where status, export and
// resume read JSON. Other names in the directory are the user's.
std::optional<std::string> experiment_file(const std::string& dir, const std::string& path) {
  std::error_code ec;
  const auto root = std::filesystem::weakly_canonical(dir, ec);
  if (ec) return std::nullopt;
  const std::filesystem::path target = export_target(path);
  const auto inside = target.lexically_relative(root);
  if (inside.empty() || *inside.begin() == "..") return std::nullopt;
  const std::string first = inside.begin()->string();
  static const std::set<std::string> owned = {"results.json", "sweep.json",      "sweep.yaml",      "state.json",
                                              "run.json",     "lock",            "strategies.json", "throughput.json",
                                              "trials",       "warm_start.json", "data"};  // (data/: the kept tables)
  if (owned.count(first) || first.size() > 4 && first.compare(first.size() - 4, 4, ".tmp") == 0) return inside.string();
  return std::nullopt;
}

// --format, or without it what --output's name says (`best.csv`: CSV), else JSON.
std::string export_format(const Args& a) {
  if (!a.format.empty()) return a.format;
  std::string extension = std::filesystem::path(a.output).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension == ".csv" ? "csv" : "json";
}

}  // namespace

int export_results(const Args& a, std::ostream& out, std::ostream& err) {
  if (int code = 0; !is_experiment(a.dir, "export", err, &code)) return code;
  if (!a.output.empty() && a.output != "-") {
    const auto folder = std::filesystem::path(a.output).parent_path();
    const std::string problem = folder.empty() ? "" : folder_problem(folder.string());
    if (!problem.empty()) {
      err << "hfta-tune export: --output " << a.output << ": " << folder.string() << " " << problem << "\n";
      return kExitUsage;
    }
    if (auto own = experiment_file(a.dir, a.output)) {
      // (trials/x.csv: trials/ is what is the experiment's, whatever x is.)
      const std::size_t slash = own->find('/');
      err << "hfta-tune export: --output " << a.output << " is "
          << (slash == std::string::npos ? a.dir + "'s own " + *own
                                         : "inside " + a.dir + "'s own " + own->substr(0, slash + 1))
          << ", which the experiment keeps; name another file\n";
      return kExitUsage;
    }
  }
  std::string damaged;
  auto results = results_or_damage(a.dir, damaged);
  if (!damaged.empty()) {
    err << "hfta-tune export: " << damaged << "; hfta-tune resume " << shell_word(a.dir) << " writes it again\n";
    return kExitFailure;
  }
  if (!results) {  // running or interrupted: the trials so far
    const auto sweep = recorded_sweep(a.dir, "export", err);
    if (!sweep) return kExitFailure;
    const SweepResult so_far = trials_so_far(a.dir, *sweep, nullptr, left_out(err, "export"));
    results = results_json(*sweep, so_far, a.dir);
    err << "hfta-tune export: " << a.dir << " has not finished; its " << so_far.trials.size()
        << " trial(s) so far, at the budgets they reached (\"finished\": false)\n";
  }
  // The CSV's columns from the sweep too (where sweep.json reads), not the trials alone.
  std::vector<std::string> parameters;
  bool parents = false;
  std::ostringstream quiet;
  if (const auto sweep = export_format(a) == "csv" ? recorded_sweep(a.dir, "export", quiet) : std::nullopt) {
    for (const auto& p : sweep->parameters) parameters.push_back(p.name);
    parents = sweep->search.method == SearchMethod::kPbt;
  }
  const std::string text =
      export_format(a) == "csv" ? results_csv(*results, parameters, parents) : results->dump(2) + "\n";
  struct stat info {};
  if (a.output.empty() || a.output == "-") {
    out << text;
  } else if (::stat(a.output.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    err << "hfta-tune export: --output " << a.output << " is a directory; name a file in it\n";
    return kExitUsage;
  } else if (::stat(a.output.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    // A device or a pipe (/dev/stdout, a FIFO): written to, never replaced.
    std::ofstream file(a.output, std::ios::binary);
    if (!(file << text) || !file.flush()) {
      err << "hfta-tune export: cannot write " << a.output << ": " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
  } else {
    try {
      // (Each export its own temporary: two at once into one file both land whole.)
      write_atomically(export_target(a.output), text, "." + std::to_string(::getpid()));
    } catch (const StorageError& e) {
      err << "hfta-tune export: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace hfta::core::verbs
