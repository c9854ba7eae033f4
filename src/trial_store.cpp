#include "hfta/core/trial_store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <vector>
#include <stdexcept>

#include <torch/serialize.h>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/trial_export.h"

namespace hfta::core {
namespace {

// In pieces: a checkpoint of a large model under Adam is gigabytes, read on
// every promotion, and need not be held twice.
std::uint32_t file_crc(const std::string& path, bool* ok) {
  std::ifstream in = open_regular(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::vector<char> piece(std::size_t{1} << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(in.gcount()));
  }
  if (in.bad()) *ok = false;  // a read error part way (EIO): the CRC is of a part
  return static_cast<std::uint32_t>(crc);
}

constexpr const char* kCheckpoint = "checkpoint.pt";
constexpr const char* kNextCheckpoint = "checkpoint.next.pt";  // written, not yet named by trial.json
constexpr const char* kPreviousCheckpoint = "checkpoint.prev.pt";  // the rung before the last
constexpr const char* kPartialCheckpoint = "partial.pt";        // mid-rung, at an evaluation point
constexpr const char* kNextPartial = "partial.next.pt";         // written, not yet named by trial.json

// Moves a checkpoint written as `next` into place once trial.json names it (by
// CRC): a kill at any moment leaves the file trial.json names, under one name
// or the other, and never overwrites the one it names before it names another.
void promote(const std::string& dir, const char* next, const char* current) {
  rename_durably(dir + "/" + next, dir + "/" + current);
}

// The file a record names, promoting its next version where a kill came
// between trial.json naming it and its move into place. With `previous`, the
// file it replaces becomes that, as save() would have made it.
std::string named_file(const std::string& dir, const char* next, const char* current, std::uint32_t expected_crc,
                       const char* previous = nullptr) {
  bool ok = false;
  if (file_crc(dir + "/" + next, &ok) == expected_crc && ok) {
    bool replaced = false;
    if (previous && file_crc(dir + "/" + current, &replaced) != expected_crc && replaced) {
      promote(dir, current, previous);
    }
    promote(dir, next, current);
  }
  return dir + "/" + current;
}

// JSON has no NaN or infinity: null, read back as NaN (a loss that is either
// makes the trial diverge all the same).
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }
double number_or_nan(const nlohmann::json& j) {
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

nlohmann::json progress_json(const trainers::SlotProgress& p) {
  const auto& pl = p.plateau;
  return {{"best", finite_or_null(p.best)}, {"bad_evals", p.bad_evals},
          {"plateau", {{"lr", pl.lr}, {"best", pl.best}, {"bad_epochs", pl.bad_epochs},
                       {"cooldown_counter", pl.cooldown_counter}, {"has_best", pl.has_best}}},
          {"loss_window", {{"sum", finite_or_null(p.loss_sum)}, {"d_sum", finite_or_null(p.d_loss_sum)},
                           {"steps", p.loss_steps}}}};
}

trainers::SlotProgress progress_of(const nlohmann::json& j) {
  trainers::SlotProgress p;
  p.best = j.at("best").is_null() ? -INFINITY : j.at("best").get<double>();
  p.bad_evals = j.at("bad_evals");
  const auto& pl = j.at("plateau");
  p.plateau.lr = pl.at("lr"), p.plateau.best = pl.at("best");
  p.plateau.bad_epochs = pl.at("bad_epochs"), p.plateau.cooldown_counter = pl.at("cooldown_counter");
  p.plateau.has_best = pl.at("has_best");
  if (j.contains("loss_window")) {  // since checkpoints can fall between evaluations
    const auto& w = j.at("loss_window");
    p.loss_sum = number_or_nan(w.at("sum")), p.d_loss_sum = number_or_nan(w.at("d_sum"));
    p.loss_steps = w.at("steps");
  }
  return p;
}

nlohmann::json rung_json(const RungResult& r) {
  nlohmann::json out{{"budget", r.budget}, {"reached", r.reached}, {"metric", r.metric}, {"status", r.status},
                     {"steps", r.steps}, {"checkpoint_crc", r.checkpoint_crc}, {"progress", progress_json(r.progress)}};
  if (!r.objectives.empty()) out["objectives"] = r.objectives;  // (NaN is written null)
  if (r.violation != 0) out["violation"] = r.violation;           // (infinity too: read back as NaN, which breaks them too)
  if (r.model_params > 0) out["model_params"] = r.model_params;
  if (r.weights.weights_crc != 0) {
    out["weights_crc"] = r.weights.weights_crc;
    out["state_dict_crc"] = r.weights.state_dict_crc;
  }
  return out;
}


// A model and its optimizer state as one LibTorch archive.
std::string checkpoint_bytes(const torch::nn::Sequential& model, const fusion::SlotState& optimizer) {
  torch::serialize::OutputArchive archive;
  for (const auto& p : model->named_parameters()) archive.write("model." + p.key(), p.value().detach().cpu());
  for (const auto& b : model->named_buffers()) archive.write("model." + b.key(), b.value().detach().cpu(), true);
  archive.write("optimizer.step", at::tensor(optimizer.step));
  for (std::size_t i = 0; i < optimizer.buffers.size(); ++i) {
    for (const auto& [name, t] : optimizer.buffers[i]) {
      archive.write("optimizer." + std::to_string(i) + "." + name, t.cpu(), true);
    }
  }
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

nlohmann::json partial_json(const PartialRung& p) {
  return {{"from_budget", p.from_budget}, {"to_budget", p.to_budget}, {"steps", p.steps},
          {"checkpoint_crc", p.checkpoint_crc}, {"progress", progress_json(p.progress)}};
}

PartialRung partial_of(const nlohmann::json& j) {
  PartialRung p;
  p.from_budget = j.at("from_budget"), p.to_budget = j.at("to_budget"), p.steps = j.at("steps");
  p.checkpoint_crc = j.at("checkpoint_crc");
  p.progress = progress_of(j.at("progress"));
  return p;
}

// A trial.json's contents. Throws on a missing or mistyped field.
StoredTrial read_trial(const nlohmann::json& j) {
  StoredTrial t;
  t.record.id = j.at("id");
  t.record.seed = j.at("seed");
  for (const auto& [k, v] : j.at("params").items()) t.record.params[k] = param_value_of(v);
  t.record.history = j.at("history");
  t.record.error = j.value("error", "");
  if (j.contains("parent")) t.record.parent = search::Parent{j.at("parent").at("trial"), j.at("parent").at("budget")};
  if (j.contains("partial")) t.partial = partial_of(j.at("partial"));
  for (const auto& r : j.at("rungs")) {
    t.rungs.push_back({r.at("budget"), number_or_nan(r.at("metric")), r.at("status"), r.at("steps"), r.at("checkpoint_crc"),
                       r.contains("progress") ? progress_of(r.at("progress")) : trainers::SlotProgress{},
                       r.contains("reached") ? r.at("reached").get<double>() : r.at("budget").get<double>()});
    if (r.contains("violation")) {  // (infinity is written null)
      const double v = number_or_nan(r.at("violation"));
      t.rungs.back().violation = std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
    }
    if (r.contains("objectives")) {
      for (const auto& v : r.at("objectives")) t.rungs.back().objectives.push_back(number_or_nan(v));
    }
    t.rungs.back().model_params = r.value("model_params", std::int64_t{0});  // (not in trials written before it)
    t.rungs.back().weights = {r.value("weights_crc", std::uint32_t{0}), r.value("state_dict_crc", std::uint32_t{0})};
  }
  if (!t.rungs.empty()) {
    t.record.budget = reached_budget(t.rungs);
    t.record.metric = t.rungs.back().metric;
    t.record.objectives = t.rungs.back().objectives;
    t.record.violation = t.rungs.back().violation;
    for (const auto& r : t.rungs) {  // (a failed rung records none: the size is its rungs' before)
      if (r.model_params > 0) t.record.model_params = r.model_params;
    }
    t.record.status = t.rungs.back().status;
    t.record.rung_metrics = rung_metrics(t.rungs);
  }
  return t;
}

}  // namespace

std::uint32_t crc32_of(const std::string& bytes) {
  return static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

std::size_t own_rungs(const StoredTrial& trial) {
  const double inherited = trial.record.parent ? trial.record.parent->budget : -1;
  return static_cast<std::size_t>(
      std::count_if(trial.rungs.begin(), trial.rungs.end(), [&](const RungResult& r) { return r.budget > inherited; }));
}

std::map<double, double> rung_metrics(const std::vector<RungResult>& rungs) {
  std::map<double, double> out;
  for (const auto& r : rungs) {
    if (r.status != "failed") out[r.budget] = r.status == "diverged" ? std::numeric_limits<double>::quiet_NaN() : r.metric;
  }
  return out;
}

double reached_budget(const std::vector<RungResult>& rungs) {
  double reached = 0;
  for (const auto& r : rungs) {
    if (r.status != "failed") reached = std::max(reached, r.reached);
  }
  return reached;
}

RungResult TrialStore::save(const TrialRecord& record, std::vector<RungResult> rungs, RungResult latest,
                      const torch::nn::Sequential& model, const fusion::SlotState& optimizer) {
  const std::string dir = trial_dir(record.id);
  make_directories(dir);
  // The new checkpoint goes beside the old one until trial.json names it: a kill
  // between the two writes must leave the rung trial.json records loadable.
  const std::string checkpoint = checkpoint_bytes(model, optimizer);
  write_atomically(dir + "/" + kNextCheckpoint, checkpoint);
  latest.checkpoint_crc = crc32_of(checkpoint);
  latest.weights = export_weights(model, dir);
  rungs.push_back(latest);
  write_trial_json(record, rungs);  // without a partial rung: this one is done
  // The last rung's checkpoint stays, as the previous one: a trial whose new
  // checkpoint is damaged falls back to it.
  struct stat info {};
  if (::stat((dir + "/" + kCheckpoint).c_str(), &info) == 0) promote(dir, kCheckpoint, kPreviousCheckpoint);
  promote(dir, kNextCheckpoint, kCheckpoint);
  for (const char* partial : {kPartialCheckpoint, kNextPartial}) std::remove((dir + "/" + partial).c_str());
  return latest;
}

void TrialStore::save_partial(const TrialRecord& record, const std::vector<RungResult>& rungs, PartialRung partial,
                              const torch::nn::Sequential& model, const fusion::SlotState& optimizer) {
  const std::string dir = trial_dir(record.id);
  make_directories(dir);
  // As a rung's checkpoint: the previous partial stays in place, named by
  // trial.json, until trial.json names this one.
  const std::string checkpoint = checkpoint_bytes(model, optimizer);
  write_atomically(dir + "/" + kNextPartial, checkpoint);
  partial.checkpoint_crc = crc32_of(checkpoint);
  write_trial_json(record, rungs, &partial);
  promote(dir, kNextPartial, kPartialCheckpoint);
}

void TrialStore::save_failure(const TrialRecord& record, std::vector<RungResult> rungs, double budget) {
  make_directories(trial_dir(record.id));
  rungs.push_back({budget, std::numeric_limits<double>::quiet_NaN(), "failed", 0, 0});
  write_trial_json(record, rungs);  // the checkpoint stays the last rung's
}

void TrialStore::write_trial_json(const TrialRecord& record, const std::vector<RungResult>& rungs,
                                  const PartialRung* partial) const {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : record.params) params[k] = to_json(v);
  nlohmann::json rung_list = nlohmann::json::array();
  for (const auto& r : rungs) rung_list.push_back(rung_json(r));
  nlohmann::json trial = {{"id", record.id}, {"params", params}, {"seed", record.seed},
                          {"rungs", rung_list}, {"history", record.history}};
  if (!record.error.empty()) trial["error"] = record.error;
  if (record.parent) trial["parent"] = {{"trial", record.parent->trial}, {"budget", record.parent->budget}};
  if (partial) trial["partial"] = partial_json(*partial);
  // The history also as JSON lines, one evaluation a line, for tools that read
  // metrics (jq, pandas.read_json(lines=True)). Written first: a kill between
  // the two leaves it ahead of trial.json, whose rung then trains again and
  // writes both, never behind it.
  std::string lines;
  for (const auto& evaluation : record.history) lines += evaluation.dump() + "\n";
  write_atomically(trial_dir(record.id) + "/history.jsonl", lines);
  write_atomically(trial_dir(record.id) + "/trial.json", trial.dump(1) + "\n");
}

std::map<std::int64_t, StoredTrial> TrialStore::load_all(
    const std::function<void(const std::string&)>& damaged) const {
  std::map<std::int64_t, StoredTrial> out;
  DIR* d = opendir((dir_ + "/trials").c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    // Ids are written without leading zeros: trials/00 is no trial's (a copy), as trials/x is not.
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || (name.size() > 1 && name[0] == '0')) {
      continue;
    }
    const std::string path = dir_ + "/trials/" + name + "/trial.json";
    struct stat st {};
    // Not there: created, but killed before its first rung finished (or
    // trials/<id> is no directory: not a trial of ours).
    if (::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) continue;
    std::ifstream in = open_regular(path);
    if (!in) {  // there, but not to be opened (permissions, EIO): said, not taken for a trial never run
      const std::string why = errno == EINVAL ? "not a regular file" : std::strerror(errno);
      if (damaged) damaged(path + " cannot be opened (" + why + "): trial " + name + " trains again from the start");
      continue;
    }
    try {
      StoredTrial t = read_trial(nlohmann::json::parse(in));
      if (std::to_string(t.record.id) != name) throw std::runtime_error("it names trial " + std::to_string(t.record.id));
      out[t.record.id] = std::move(t);
    } catch (const std::exception& problem) {
      if (damaged) damaged(path + " cannot be read (" + problem.what() + "): trial " + name + " trains again from the start");
    }
  }
  closedir(d);
  return out;
}

std::optional<std::string> TrialStore::intact_checkpoint(std::int64_t id, std::uint32_t expected_crc,
                                                         std::string* problem) const {
  // A rung's checkpoint is the last one or the one before it (also where a
  // kill between save()'s two renames leaves the last one named as it was).
  const std::string dir = trial_dir(id);
  const std::string last = named_file(dir, kNextCheckpoint, kCheckpoint, expected_crc, kPreviousCheckpoint);
  if (intact(last, expected_crc, problem)) return last;
  const std::string before = dir + "/" + kPreviousCheckpoint;
  std::string previous;
  if (intact(before, expected_crc, &previous)) return before;
  *problem += "; " + previous;
  return std::nullopt;
}

void TrialStore::settle(const StoredTrial& trial) const {
  const std::string dir = trial_dir(trial.record.id);
  auto remove = [&](const char* name) { std::remove((dir + "/" + name).c_str()); };
  // The checkpoint trial.json names: its last rung's that did not fail (a
  // failure keeps the one before).
  const auto named = std::find_if(trial.rungs.rbegin(), trial.rungs.rend(), [](const RungResult& r) { return r.status != "failed"; });
  if (named != trial.rungs.rend()) {
    named_file(dir, kNextCheckpoint, kCheckpoint, named->checkpoint_crc, kPreviousCheckpoint);
  }
  // Still there, read whole: a write that trial.json never recorded (its rung
  // or piece trains again). One that cannot be read stays: it may be the one named.
  auto remove_unnamed = [&](const char* name) {
    bool read = false;
    file_crc(dir + "/" + name, &read);
    if (read) std::remove((dir + "/" + name).c_str());
  };
  remove_unnamed(kNextCheckpoint);
  if (trial.partial) {
    named_file(dir, kNextPartial, kPartialCheckpoint, trial.partial->checkpoint_crc);
  } else {
    remove(kPartialCheckpoint);  // of a rung finished since (a kill came before save() removed it)
  }
  remove_unnamed(kNextPartial);
}

std::uintmax_t TrialStore::drop_checkpoints(std::int64_t id) const {
  std::uintmax_t freed = 0;
  for (const char* name : {kCheckpoint, kNextCheckpoint, kPreviousCheckpoint, kPartialCheckpoint, kNextPartial}) {
    std::error_code ec;
    const std::string path = trial_dir(id) + "/" + name;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && std::filesystem::remove(path, ec)) freed += size;
  }
  return freed;
}

bool TrialStore::has_checkpoint(std::int64_t id) const {
  struct stat info {};
  const std::string dir = trial_dir(id);
  return ::stat((dir + "/" + kCheckpoint).c_str(), &info) == 0 ||
         ::stat((dir + "/" + kNextCheckpoint).c_str(), &info) == 0 ||
         ::stat((dir + "/" + kPreviousCheckpoint).c_str(), &info) == 0;
}

bool TrialStore::load_checkpoint(std::int64_t id, std::uint32_t expected_crc, torch::nn::Sequential& model,
                                 fusion::SlotState& optimizer, std::string* problem) const {
  const auto path = intact_checkpoint(id, expected_crc, problem);
  if (path) read_archive(*path, model, optimizer);
  return path.has_value();
}

bool TrialStore::load_partial(std::int64_t id, const PartialRung& partial, torch::nn::Sequential& model,
                              fusion::SlotState& optimizer, std::string* problem) const {
  const std::string path = named_file(trial_dir(id), kNextPartial, kPartialCheckpoint, partial.checkpoint_crc);
  if (!intact(path, partial.checkpoint_crc, problem)) return false;
  read_archive(path, model, optimizer);
  return true;
}

bool TrialStore::intact_weights(std::int64_t id, const RungResult& rung, std::string* problem) const {
  return rung.weights.weights_crc == 0 || intact(trial_dir(id) + "/" + kWeightsFile, rung.weights.weights_crc, problem);
}

bool TrialStore::intact(const std::string& path, std::uint32_t expected_crc, std::string* problem) {
  bool ok = false;
  const std::uint32_t crc = file_crc(path, &ok);
  if (!ok) {
    const std::string why = std::strerror(errno);  // (of the open or the read that failed)
    struct stat st {};
    *problem = path + (::lstat(path.c_str(), &st) == 0 ? " cannot be read (" + why + ")" : std::string(" is missing"));
    return false;
  }
  if (crc != expected_crc) {
    *problem = path + " does not match the rung's CRC-32 (truncated, corrupt or another rung's)";
    return false;
  }
  return true;
}

void TrialStore::read_archive(const std::string& path, torch::nn::Sequential& model, fusion::SlotState& optimizer) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters()) {
    at::Tensor t;
    archive.read("model." + p.key(), t);
    p.value().copy_(t);
  }
  // Batch norms' running statistics: evaluation depends on them.
  for (auto& b : model->named_buffers()) {
    at::Tensor t;
    archive.read("model." + b.key(), t, /*is_buffer=*/true);
    b.value().copy_(t);
  }
  at::Tensor step;
  archive.read("optimizer.step", step);
  optimizer.step = step.item<std::int64_t>();
  // "optimizer.<index>.<state name>", for the buffers the optimizer had: one
  // index per parameter, and past them whatever the trainer keeps per trial
  // beside (the loss scale with fp16).
  std::map<std::size_t, std::map<std::string, at::Tensor>> entries;
  for (const auto& key : archive.keys()) {
    if (key.rfind("optimizer.", 0) != 0 || key == "optimizer.step") continue;
    const auto dot = key.find('.', 10);
    at::Tensor t;
    archive.read(key, t, true);
    entries[std::stoul(key.substr(10, dot - 10))][key.substr(dot + 1)] = t;
  }
  const std::size_t indices = entries.empty() ? 0 : entries.rbegin()->first + 1;
  optimizer.buffers.assign(std::max(model->parameters().size(), indices), {});
  for (auto& [index, names] : entries) optimizer.buffers[index] = std::move(names);
}

}  // namespace hfta::core
