#include "hfta/core/cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hfta/core/did_you_mean.h"
#include "hfta/core/duration.h"
#include "hfta/core/tuner.h"
#include "hfta/core/version.h"
#include "verbs.h"

namespace hfta::core {
namespace {

// "auto,off" as "auto or off".
std::string one_of(const std::string& comma_separated) {
  std::vector<std::string> items;
  for (std::size_t at = 0; at <= comma_separated.size();) {
    const std::size_t end = std::min(comma_separated.find(',', at), comma_separated.size());
    items.push_back(comma_separated.substr(at, end - at));
    at = end + 1;
  }
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

// CLI11's wording ("--out: At Most 1 required but received 3", "--fusion:
// maybe not in {auto,off}") as the verbs' own messages read; others as they are.
std::string in_our_words(const std::string& what) {
  static const std::regex repeated("(--[a-z-]+): At Most 1 required but received ([0-9]+)");
  static const std::regex no_value("(--[a-z-]+): 1 required ([A-Z]+)(:\\{([^}]*)\\})? missing");
  static const std::regex not_in("(--[a-z-]+): (.*) not in \\{(.*)\\}");
  static const std::regex extras("The following arguments? (was|were) not expected: (.*)");
  static const std::regex required("(sweep|dir) is required");
  std::smatch m;
  if (std::regex_match(what, m, repeated)) return m[1].str() + " is given " + m[2].str() + " times; give it once";
  if (std::regex_match(what, m, no_value)) {
    return m[1].str() + " needs a value" +
           (m[4].matched ? " (" + one_of(m[4].str()) + ")" : m[2].str() == "INT" ? " (a whole number)" : "");
  }
  if (std::regex_match(what, m, not_in)) return m[1].str() + ": '" + m[2].str() + "' is not one of " + one_of(m[3].str());
  if (std::regex_match(what, m, extras)) return "unexpected argument" + std::string(m[1].str() == "were" ? "s " : " ") + m[2].str();
  if (std::regex_match(what, m, required)) {
    return m[1].str() == "sweep" ? "a sweep file is required" : "an experiment directory is required";
  }
  if (what == "A subcommand is required") return "a verb is required: validate, run, resume, plan, status or export";
  return what;
}

// A parse error as the verbs' own messages read: " run: unknown option
// '--wrokers' (did you mean '--workers'?) (hfta-tune run --help)", where
// CLI11 said "The following arguments were not expected: 1 --wrokers".
std::string parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, const char* const* argv) {
  const auto verbs = app.get_subcommands();
  const CLI::App* verb = verbs.empty() ? nullptr : verbs.front();
  const std::string name = verb ? " " + verb->get_name() : "";
  std::string what = in_our_words(e.what());
  if (verb && dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> options;
    for (const CLI::Option* o : verb->get_options()) {
      for (const auto& l : o->get_lnames()) options.push_back("--" + l);
    }
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      const std::string flag = arg.substr(0, arg.find('='));
      if (flag.rfind("--", 0) == 0 && flag.size() > 2 &&
          std::find(options.begin(), options.end(), flag) == options.end()) {
        what = "unknown option '" + flag + "'" + did_you_mean(flag, options);
        break;
      }
    }
  }
  // `validate -x.yaml`: CLI11 takes the path for an unknown option and says only that none was given.
  if (verb && dynamic_cast<const CLI::RequiredError*>(&e)) {
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      if (arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && !verb->get_option_no_throw(arg.substr(0, 2))) {
        what += " ('" + arg + "' reads as an option: a path that starts with '-' is written ./" + arg + ")";
        break;
      }
    }
  }
  return name + ": " + what + " (hfta-tune" + name + " --help)";
}

// The verb a path given in a verb's place most likely wanted: a sweep file
// to run, an experiment directory to look at.
std::string verb_for_a_path(const std::string& word) {
  std::error_code ec;
  const std::string extension = std::filesystem::path(word).extension().string();
  if ((extension == ".yaml" || extension == ".yml" || extension == ".json") && std::filesystem::is_regular_file(word, ec)) {
    return "; to run that sweep: hfta-tune run " + word;
  }
  if (std::filesystem::is_regular_file(std::filesystem::path(word) / "sweep.json", ec)) {
    return "; for that experiment: hfta-tune status " + word + " (or resume, or export)";
  }
  return "";
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  process_threads();  // LibTorch's count as the process began, read before a tuner divides it
  CLI::App app{"hfta-tune: hyperparameter tuning with horizontally fused training", "hfta-tune"};
  app.set_version_flag("--version", std::string("hfta-tune ") + kVersion);
  app.require_subcommand(1);
  verbs::Args a;

  auto* validate_cmd = app.add_subcommand("validate", "Check a sweep file and print a summary");
  validate_cmd->add_option("sweep", a.sweep, "The sweep YAML file")->required();
  validate_cmd->add_flag("--json", a.json, "Print the sweep with every default filled in, as JSON");

  // Checks that name what they expect (CLI11's own print a double's whole range).
  const auto seconds = [](const std::string& v) -> std::string {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    return !v.empty() && *end == 0 && std::isfinite(d) && d >= 0 ? "" : "expected seconds >= 0, got '" + v + "'";
  };
  const auto count = [](const std::string& v) -> std::string {
    const bool digits = !v.empty() && v.size() <= 4 && v.find_first_not_of("0123456789") == std::string::npos;
    return digits && std::stoi(v) >= 1 ? "" : "expected a whole number from 1 to 9999, got '" + v + "'";
  };
  const auto batches = [](const std::string& v) -> std::string {
    const bool digits = !v.empty() && v.size() <= 2 && v.find_first_not_of("0123456789") == std::string::npos;
    return v == "auto" || (digits && std::stoi(v) <= 64) ? "" : "expected auto or a whole number from 0 to 64, got '" + v + "'";
  };
  const auto seed = [](const std::string& v) -> std::string {
    // The YAML seed's range: a decimal integer in [0, 2^63 - 1].
    const bool digits = !v.empty() && v.size() <= 19 && v.find_first_not_of("0123456789") == std::string::npos;
    return digits && (v.size() < 19 || v <= "9223372036854775807") ? ""
                                                                    : "expected an integer in [0, 2^63 - 1], got '" + v + "'";
  };

  // run and plan take the same sweep, fusion, device and seed.
  auto add_sweep_options = [&a, seed](CLI::App* cmd) {
    cmd->add_option("sweep", a.sweep, "The sweep YAML file")->required();
    cmd->add_option("--fusion", a.fusion, "Fuse same-shape trials into arrays, or train each alone")
        ->check(CLI::IsMember({"auto", "off"}));
    cmd->add_option("--device", a.device, "cpu, cuda (every GPU) or cuda:0,cuda:1,...");
    cmd->add_option("--seed", a.seed, "Override the sweep's seed")->check(seed);
  };

  auto* run_cmd = app.add_subcommand("run", "Run a sweep to the end");
  add_sweep_options(run_cmd);
  // A path, not a flag that lost its own value ("--out --workers"), nor empty.
  const auto path = [](const char* what, bool dash_is_stdout) {
    return [what, dash_is_stdout](const std::string& v) -> std::string {
      if (v.empty()) return std::string("expected ") + what + " path, got an empty one";
      if (v[0] == '-' && !(dash_is_stdout && v == "-")) return std::string("expected ") + what + " path, got '" + v + "' (a path that starts with '-': write ./" + v + ")";
      return "";
    };
  };
  run_cmd->add_option("--out", a.out_dir, "Experiment directory (default: runs/<name>)")->check(path("a directory", false));
  const std::string checkpoint_help =
      "Seconds between mid-rung checkpoints, taken every 50 steps and at evaluation points (0: at every one; "
      "default 300; resume: the run's)";
  run_cmd->add_option("--checkpoint-every", a.checkpoint_every, checkpoint_help)->check(seconds);
  const std::string workers_help =
      "Arrays trained at the same time, each in a thread with a share of the cores and memory; same results at "
      "the same --threads (default: one per core, at most 4)";
  run_cmd->add_option("--workers", a.workers, workers_help)->check(count);
  const std::string threads_help =
      "LibTorch's intra-op threads of each array; results depend on them (default: OMP_NUM_THREADS, else the cores, "
      "shared out among the workers; resume: the run's)";
  run_cmd->add_option("--threads", a.threads, threads_help)->check(count);
  const std::string prefetch_help =
      "Training batches a background thread prepares ahead (0: each cut when needed); same results (default auto: "
      "none on the CPU or where the dataset fits on the GPU, else 2 from pinned host memory)";
  run_cmd->add_option("--prefetch", a.prefetch, prefetch_help)->check(batches);
  const std::string keep_help =
      "all: every trial keeps its last two rung checkpoints (weights and optimizer state); live: a trial's go once "
      "it will train no more, its weights.pt and state_dict.pt stay (default all; resume: as the run)";
  run_cmd->add_option("--keep-checkpoints", a.keep_checkpoints, keep_help)->check(CLI::IsMember({"all", "live"}));

  const auto duration = [](const std::string& v) -> std::string {
    // Given, it must say how long: "" (the unset option's value) is no duration.
    return !v.empty() && duration_seconds(v) ? "" : "expected a duration such as 90s, 30m, 2h or 1h30m, got '" + v + "'";
  };
  const std::string time_limit_help =
      "Stop after this long (90s, 30m, 2h, 1h30m, 1.5h, or seconds; from the command's start; 0: no limit) as Ctrl-C "
      "would, after a checkpoint, print the best trials so far and exit 0; resume continues";
  run_cmd->add_option("--time-limit", a.time_limit, time_limit_help)->check(duration);

  auto* resume_cmd = app.add_subcommand("resume", "Continue an interrupted sweep, or one its sweep.yaml grew (more trials, repeats or iterations)");
  resume_cmd->add_option("dir", a.dir, "The experiment directory")->required();
  resume_cmd->add_option("--checkpoint-every", a.checkpoint_every, checkpoint_help)->check(seconds);
  resume_cmd->add_option("--workers", a.workers, workers_help)->check(count);
  resume_cmd->add_option("--threads", a.threads, threads_help)->check(count);
  resume_cmd->add_option("--prefetch", a.prefetch, prefetch_help)->check(batches);
  resume_cmd->add_option("--keep-checkpoints", a.keep_checkpoints, keep_help)->check(CLI::IsMember({"all", "live"}));
  resume_cmd->add_option("--time-limit", a.time_limit, time_limit_help)->check(duration);
  resume_cmd->add_option("--device", a.device, "cpu, cuda (every GPU) or cuda:0,cuda:1,... (default: the run's)");

  auto* plan_cmd = app.add_subcommand("plan", "Print the brackets, rungs and arrays a sweep will run");
  add_sweep_options(plan_cmd);
  plan_cmd->add_flag("--json", a.json, "Print the plan as JSON");
  plan_cmd->add_option("--workers", a.workers, "The workers run will use: arrays are sized to their share of memory")
      ->check(count);

  auto* status_cmd = app.add_subcommand("status", "Show the progress of a sweep");
  status_cmd->add_option("dir", a.dir, "The experiment directory")->required();

  auto* export_cmd = app.add_subcommand("export", "Write every trial and the best one");
  export_cmd->add_option("dir", a.dir, "The experiment directory")->required();
  export_cmd->add_option("--format", a.format, "json or csv (default: csv for an --output named *.csv, else json)")->check(CLI::IsMember({"json", "csv"}));
  export_cmd->add_option("--output", a.output, "File to write (default: standard output)")->check(path("a file", true));

  // `hfta-tune help [VERB]`, as git and cargo take it: VERB --help.
  if (argc > 1 && std::string(argv[1]) == "help") {
    std::vector<const char*> asked = {argv[0]};
    if (argc > 2) asked.push_back(argv[2]);
    asked.push_back("--help");
    return run_cli(static_cast<int>(asked.size()), asked.data(), out, err);
  }
  // A first word that is no verb: CLI11 would say only that one is required.
  std::vector<std::string> verbs;
  for (const auto* cmd : app.get_subcommands({})) verbs.push_back(cmd->get_name());
  const auto is_verb = [&verbs](const std::string& word) {
    return std::find(verbs.begin(), verbs.end(), word) != verbs.end();
  };
  if (argc > 1 && argv[1][0] != '-' && !is_verb(argv[1])) {
    err << "hfta-tune: unknown verb '" << argv[1] << "'" << did_you_mean(argv[1], verbs) << "; the verbs are "
        << join_alternatives(verbs) << " (hfta-tune --help)" << verb_for_a_path(argv[1]) << "\n";
    return kExitUsage;
  }
  // A first word that is an option other than hfta-tune's own: a verb's
  // option before its verb (`hfta-tune --json plan x.yaml`), or a misspelling.
  const std::vector<std::string> own = {"--help", "-h", "--version"};
  const auto flag_of = [](const std::string& arg) { return arg.substr(0, arg.find('=')); };
  if (argc > 1 && argv[1][0] == '-' && std::find(own.begin(), own.end(), flag_of(argv[1])) == own.end()) {
    const int at = static_cast<int>(std::find_if(argv + 1, argv + argc, is_verb) - argv);
    // The first option before the verb that the verb does not take, if any.
    std::string foreign;
    for (int i = 1; i < at && i < argc && foreign.empty(); ++i) {
      const std::string flag = flag_of(argv[i]);
      if (!flag.empty() && flag[0] == '-' && (at == argc || !app.get_subcommand(argv[at])->get_option_no_throw(flag))) foreign = flag;
    }
    if (foreign.empty()) {
      std::string reordered = std::string("hfta-tune ") + argv[at];
      for (int i = 1; i < argc; ++i) reordered += i == at ? "" : std::string(" ") + argv[i];
      err << "hfta-tune: options go after the verb: " << reordered << "\n";
    } else if (at < argc) {
      err << "hfta-tune: unknown option '" << foreign << "' (" << argv[at] << " takes no such option: hfta-tune "
          << argv[at] << " --help)\n";
    } else {
      err << "hfta-tune: unknown option '" << foreign << "'" << did_you_mean(foreign, own)
          << "; a verb is required: " << join_alternatives(verbs) << " (hfta-tune --help)\n";
    }
    return kExitUsage;
  }
  // What these print is their product (run's and resume's is on disk): output
  // that could not be written (`export DIR > file` on a full disk) fails them,
  // as it fails --help and --version.
  const auto printed = [&out, &err](const std::string& verb, int code) -> int {
    if (out) errno = 0;  // (failed before, errno is most likely the write's)
    out.flush();
    if (code != kExitOk || out) return code;
    err << "hfta-tune" << (verb.empty() ? "" : " " + verb) << ": cannot write standard output"
        << (errno ? std::string(": ") + std::strerror(errno) : "") << "\n";
    return kExitFailure;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version are successes; every other parse error is bad usage.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e, out, err);
      return printed("", kExitOk);
    }
    err << "hfta-tune" << parse_error(app, e, argc, argv) << "\n";
    return kExitUsage;
  }

  // "runs/x/" names runs/x: messages then say runs/x/results.json, not runs/x//results.json.
  for (std::string* path : {&a.dir, &a.out_dir}) {
    while (path->size() > 1 && path->back() == '/') path->pop_back();
  }
  if (*run_cmd) return verbs::run(a, out, err);
  if (*resume_cmd) return verbs::resume(a, out, err);
  if (*validate_cmd) return printed("validate", verbs::validate(a, out, err));
  if (*plan_cmd) return printed("plan", verbs::plan(a, out, err));
  if (*status_cmd) return printed("status", verbs::status(a, out, err));
  if (*export_cmd) return printed("export", verbs::export_results(a, out, err));
  return kExitUsage;
}

}  // namespace hfta::core

