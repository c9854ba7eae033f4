// What the verbs print of a sweep's results and of the way it trains.
#include "verbs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <thread>

#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_summary.h"

namespace hfta::core::verbs {

// A number of results.json to six significant digits, as run prints them (the
// file keeps every one); one not measured, NaN as run holds it and null as the
// file keeps it, is "none" to both.
std::string number(const nlohmann::json& v) {
  if (v.is_null() || (v.is_number() && std::isnan(v.get<double>()))) return "none";
  std::ostringstream text;
  if (v.is_number()) text << v.get<double>(); else text << v.dump();
  return text.str();
}

// results.json's best.test as run and status print it: a GAN's FID first (its
// loss and accuracy are its discriminator's), a language model's perplexity too.
std::string test_summary(const nlohmann::json& test) {
  if (test.contains("rmse")) {  // a regression's, in the target's units
    return "loss " + number(test.at("loss")) + ", RMSE " + number(test.at("rmse")) + ", MAE " + number(test.at("mae")) +
           ", R2 " + number(test.at("r2"));
  }
  std::string text = "loss " + number(test.at("loss")) + ", accuracy " + number(test.at("accuracy"));
  if (test.contains("perplexity")) text += ", perplexity " + number(test.at("perplexity"));
  if (test.contains("f1")) text += ", F1 " + number(test.at("f1")) + ", balanced accuracy " + number(test.at("balanced_accuracy"));
  if (test.contains("auc")) text += ", AUC " + number(test.at("auc"));
  if (test.contains("average_precision")) text += ", average precision " + number(test.at("average_precision"));
  if (test.contains("fid")) text = "FID " + number(test.at("fid")) + " (the discriminator's " + text + ")";
  return text;
}

std::string target_summary(const nlohmann::json& results) {
  if (!results.contains("target_reached")) return "";
  const auto& metric = results.at("metric");
  const std::string target = metric.at("name").get<std::string>() + " " + number(metric.at("target"));
  const auto& reached = results.at("target_reached");
  if (!reached.is_object()) return "no trial reached the target " + target + "\n";
  return "trial " + reached.at("id").dump() + " reached the target " + target + " (" + number(reached.at("metric")) +
         " at budget " + number(reached.at("budget")) + "): the sweep ended after that round\n";
}

// The five best trials, best first, as `run` ends: of those that may be best
// (best_trial's), so the first is results.json's best.
void print_best(const SweepConfig& sweep, const std::vector<TrialRecord>& trials, bool finished, std::ostream& out) {
  std::vector<const TrialRecord*> ranked;
  for (const auto& t : trials) {
    if (may_be_best(t)) ranked.push_back(&t);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto* x, const auto* y) { return ranks_before(*x, *y, sweep.metric.goal); });
  out << "\nbest trials (" << sweep.metric.name << ", " << to_string(sweep.metric.goal) << "):\n";
  // Columns as wide as their widest cell, so that the rows line up.
  const std::size_t shown = std::min<std::size_t>(ranked.size(), 5);
  std::vector<std::array<std::string, 4>> rows;
  std::array<std::size_t, 4> width{};
  for (std::size_t i = 0; i < shown; ++i) {
    std::ostringstream metric, budget;
    metric << ranked[i]->metric;
    budget << ranked[i]->budget;
    rows.push_back({std::to_string(ranked[i]->id), metric.str(), budget.str(), ranked[i]->status});
    for (std::size_t c = 0; c < 4; ++c) width[c] = std::max(width[c], rows.back()[c].size());
  }
  auto padded = [](const std::string& cell, std::size_t w) { return cell + std::string(w - cell.size(), ' '); };
  for (std::size_t i = 0; i < shown; ++i) {
    out << "  trial " << padded(rows[i][0], width[0]) << "  " << sweep.metric.name << " " << padded(rows[i][1], width[1])
        << "  budget " << padded(rows[i][2], width[2]) << "  " << padded(rows[i][3], width[3]) << "  {";
    bool first = true;
    for (const auto& [k, v] : ranked[i]->params) {
      out << (first ? "" : ", ") << k << ": " << search::display(v);
      first = false;
    }
    out << "}\n";
  }
  if (ranked.empty()) {
    out << "  none" << (finished ? "" : " yet") << " (failed and diverged trials do not count"
        << (sweep.constraints.empty() ? "" : ", nor those outside the constraints") << ")\n";
  }
  const auto outside = std::count_if(trials.begin(), trials.end(), [](const TrialRecord& t) {
    return (t.status == "completed" || t.status == "stopped" || t.status == "diverged") && t.violation != 0;  // (results' feasible)
  });
  if (outside > 0) {
    out << "  (" << outside << (outside == 1 ? " trial ended" : " trials ended") << " outside the constraints: "
        << "never best)\n";
  }
}

// A front member's test result that speaks to the first objective: a GAN's
// FID (its accuracy is its discriminator's), a language model's perplexity,
// a loss for a loss, else the accuracy.
std::string test_cell(const std::string& metric, const nlohmann::json& test) {
  if (test.contains("fid")) return "test FID " + number(test.at("fid"));
  if (test.contains("perplexity")) return "test perplexity " + number(test.at("perplexity"));
  if (metric.find("loss") != std::string::npos) return "test loss " + number(test.at("loss"));
  if (test.contains("rmse")) {
    if (metric == "val_mae") return "test MAE " + number(test.at("mae"));
    if (metric == "val_r2") return "test R2 " + number(test.at("r2"));
    return "test RMSE " + number(test.at("rmse"));
  }
  if (metric == "val_f1" && test.contains("f1")) return "test F1 " + number(test.at("f1"));
  if (metric == "val_balanced_accuracy" && test.contains("balanced_accuracy")) {
    return "test balanced accuracy " + number(test.at("balanced_accuracy"));
  }
  if (metric == "val_auc" && test.contains("auc")) return "test AUC " + number(test.at("auc"));
  if (metric == "val_average_precision" && test.contains("average_precision")) {
    return "test average precision " + number(test.at("average_precision"));
  }
  return "test accuracy " + number(test.at("accuracy"));
}

// results.json's Pareto front, as run and status end: each trade-off the
// sweep found, in the order of the first objective, with its test metrics.
std::string pareto_summary(const nlohmann::json& results) {
  if (!results.contains("pareto_front")) return "";
  std::vector<std::string> names, goals;
  for (const auto& o : results.at("objectives")) {
    names.push_back(o.at("name").get<std::string>());
    goals.push_back(o.at("name").get<std::string>() + " " + o.at("goal").get<std::string>() + "d");
  }
  const auto& front = results.at("pareto_front");
  std::ostringstream out;
  out << "\nPareto front (" << joined(goals) << "): " << front.size() << (front.size() == 1 ? " trial" : " trials")
      << (front.empty() ? std::string(" (none trained to budget.max") +
                              (results.contains("constraints") ? " within the constraints" : "") +
                              (results.value("finished", true) ? ")" : " yet)")
                        : std::string())
      << "\n";
  // Columns as wide as their widest cell, so that the rows line up.
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : front) {
    std::vector<std::string> row{"trial " + t.at("id").dump()};
    for (const auto& name : names) row.push_back(name + " " + number(t.at("objectives").value(name, nlohmann::json())));
    row.push_back(t.contains("test") ? test_cell(names.front(), t.at("test")) : "");
    std::string params;
    for (const auto& [k, v] : t.at("params").items()) params += (params.empty() ? "" : ", ") + k + ": " + (v.is_string() ? v.get<std::string>() : number(v));
    row.push_back("{" + params + "}");
    rows.push_back(row);
  }
  std::vector<std::size_t> width(names.size() + 3, 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    out << " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (!row[c].empty()) out << " " << row[c] << (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 1, ' ') : "");
    }
    out << "\n";
  }
  return out.str();
}

// results.json's importance, as run and status end: "parameter importance
// (fANOVA of val_accuracy at 3 epochs, 8 trials): lr 0.62, dropout 0.21, ...".
std::string importance_summary(const nlohmann::json& results) {
  if (!results.contains("importance")) return "";  // (a results.json written before it)
  const auto& importance = results.at("importance");
  std::string left_out;
  for (const auto& p : importance.value("left_out", nlohmann::json::array())) {
    left_out += (left_out.empty() ? "" : ", ") + p.at("name").get<std::string>() + " (" + p.at("why").get<std::string>() + ")";
  }
  if (!left_out.empty()) left_out = "; left out: " + left_out;
  std::ostringstream out;
  out << "\nparameter importance";
  if (importance.contains("why")) {
    out << ": not judged (" << importance.at("why").get<std::string>() << ")" << left_out << "\n";
    return out.str();
  }
  out << " (fANOVA of " << importance.at("metric").get<std::string>() << " at "
      << budget_text(importance.at("budget").get<double>(), importance.value("unit", "budget")) << ", "
      << importance.at("results") << " trials"
      << (importance.contains("sampled_from") ? " of " + importance.at("sampled_from").dump() + ", a seeded sample" : "")
      << "):";
  out << std::fixed << std::setprecision(2);
  bool first = true;
  for (const auto& p : importance.at("params")) {
    out << (first ? " " : ", ") << p.at("name").get<std::string>() << " " << p.at("importance").get<double>();
    first = false;
  }
  out << std::setprecision(0) << "; alone they explain " << 100 * importance.at("main_effects").get<double>()
      << "% of its variance, the rest is their interactions" << left_out << "\n";
  return out.str();
}

// The plan's arrays are each round's as one worker trains them; several cut
// them further, by measured throughput (search/worker_balance.h), each within
// its share of the memory (the plan's memory line says it). More workers than CPU cores only take turns on
// them, in smaller arrays.
std::string workers_note(int workers, const std::vector<c10::Device>& devices) {
  if (workers <= 1) return "";
  std::string note = "note: with " + std::to_string(workers) + " workers, a round's arrays may be cut further, so that "
                     "no worker waits while another trains its last one\n";
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  if (devices.front().is_cpu() && cores > 0 && workers > cores) {
    note += "note: " + std::to_string(workers) + " workers on " + std::to_string(cores) +
            " CPU cores take turns on them, in smaller arrays: fewer workers fuse more\n";
  }
  return note;
}

// "a", "a and b", "a, b and c".
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

// Quoted where a shell would split or expand it ("runs/exp 1", "it's"), so
// that a printed `hfta-tune resume DIR` pastes back as it reads.
std::string shell_word(const std::string& path) {
  const bool plain = !path.empty() && path.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./:@%+=,-") == std::string::npos;
  if (plain) return path;
  std::string out = "'";
  for (const char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace hfta::core::verbs
