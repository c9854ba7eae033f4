// What `hfta-tune run` trains and records: every model kind, optimizers and schedules, workers and
// devices, failing and stopping trials, each trial as it trains alone.
#include <gtest/gtest.h>

#include <torch/cuda.h>
#include <set>
#include <thread>

#include "../support/cli_fixture.h"
#include "../support/sanitizer.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

// Flipped and cropped training images (the image models' flip and crop
// options, crop also a parameter): a fused run trains every trial as
// --fusion off does, and flipping changes every trial's numbers.
TEST_F(Cli, FlipsAndCropsTrainFusedAsAloneAndFlippingChangesEveryTrial) {
  const std::string augmented = R"(name: augmented
seed: 4
task: {model: cnn, batch_size: 32, validation_size: 500, options: {flip: true}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 10, max: 30}
search: {method: sha, trials: 4, eta: 3}
parameters:
  lr: {distribution: log_uniform, min: 0.01, max: 0.1}
  crop: {values: [2, 3]}
)";
  std::string plain = augmented;
  plain.replace(plain.find("flip: true"), 10, "flip: false");
  const std::string sweep = write_sweep("augmented.yaml", augmented);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/fused").code, 0);
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/fused");
  ASSERT_EQ(run("run " + write_sweep("plain.yaml", plain) + " --out " + dir_ + "/plain").code, 0);
  const auto with = results(dir_ + "/fused"), without = results(dir_ + "/plain");
  ASSERT_EQ(with.at("trials").size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& a = with.at("trials")[i];
    const auto& b = without.at("trials")[i];
    EXPECT_EQ(a.at("params").at("lr"), b.at("params").at("lr")) << i;  // the same draws...
    EXPECT_NE(a.at("history")[0].at("train_loss"), b.at("history")[0].at("train_loss")) << i;  // ...other batches
  }
}

TEST_F(Cli, RunTrainsASweepAndWritesResults) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const Result r = run("run " + sweep + " --out " + dir_ + "/fused");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("best trials"), std::string::npos) << r.out;
  {  // The table's columns line up, whatever the widths of ids, metrics and budgets.
    std::istringstream table(r.out.substr(r.out.find("best trials")));
    std::set<std::size_t> budget_at, brace_at;
    for (std::string line; std::getline(table, line);) {
      if (line.rfind("  trial ", 0) != 0) continue;
      budget_at.insert(line.find("  budget "));
      brace_at.insert(line.find("  {"));
    }
    EXPECT_EQ(budget_at.size(), 1u) << r.out;
    EXPECT_EQ(brace_at.size(), 1u) << r.out;
  }
  // The progress lines count the trials done training: none after the first
  // array (its trials go on to another rung), all of them after the last.
  EXPECT_NE(r.out.find("| trials done 0/17, results "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| trials done 17/17, results 22/22"), std::string::npos) << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/fused/results.json"));
  EXPECT_EQ(results.at("format"), 1);
  EXPECT_EQ(results.at("name"), "tiny");
  EXPECT_EQ(results.at("metric").at("goal"), "maximize");
  // Hyperband R=90, r=10, eta=3: brackets of 9, 5 and 3 trials.
  ASSERT_EQ(results.at("trials").size(), 17u);
  for (const auto& t : results.at("trials")) {
    EXPECT_TRUE(t.at("params").contains("lr"));
    EXPECT_EQ(t.at("status"), "completed");
    EXPECT_FALSE(t.at("history").empty());
    EXPECT_GT(t.at("metric").get<double>(), 0.3);  // it learned from the real data
    EXPECT_EQ(t.at("final"), t.at("history").back());  // every metric where it ended
    EXPECT_EQ(t.at("final").at("val_accuracy"), t.at("metric"));
  }
  EXPECT_TRUE(results.at("best").contains("id"));
  // The best trial's final model on the held-out test images, near its validation accuracy.
  const auto& test = results.at("best").at("test");
  EXPECT_NEAR(test.at("accuracy").get<double>(), results.at("best").at("metric").get<double>(), 0.05);
  EXPECT_GT(test.at("loss").get<double>(), 0);
  EXPECT_NE(r.out.find("on the test split"), std::string::npos) << r.out;
  EXPECT_TRUE(exists(dir_ + "/fused/sweep.json"));
  // state.json: every result the scheduler was told, in order (Hyperband here: 22
  // rung results of 17 trials), and the searcher's counts.
  const auto state = nlohmann::json::parse(slurp(dir_ + "/fused/state.json"));
  EXPECT_EQ(state.at("format"), 1);
  EXPECT_EQ(state.at("finished"), true);
  EXPECT_EQ(state.at("scheduler").at("method"), "hyperband");
  ASSERT_EQ(state.at("scheduler").at("results").size(), 22u);
  EXPECT_EQ(state.at("searcher").at("configurations"), 17);
  EXPECT_EQ(state.at("searcher").at("observations"), 22);
  EXPECT_EQ(state.at("random_streams").at("seed"), 1);
  std::map<std::int64_t, nlohmann::json> last;  // each trial's last result is where results.json leaves it
  for (const auto& told : state.at("scheduler").at("results")) last[told.at("trial")] = told;
  for (const auto& t : results.at("trials")) {
    EXPECT_EQ(last.at(t.at("id")).at("budget"), t.at("budget")) << t.at("id");
    EXPECT_EQ(last.at(t.at("id")).at("metric"), t.at("metric")) << t.at("id");
    EXPECT_EQ(last.at(t.at("id")).at("status"), "completed") << t.at("id");
  }
  {  // Parameter importance, of the results at the largest budget that 8 trials reached (30 steps here).
    std::map<double, int> at_budget;
    for (const auto& told : state.at("scheduler").at("results")) at_budget[told.at("budget").get<double>()]++;
    ASSERT_EQ(at_budget.at(30.0), 8);
    ASSERT_LT(at_budget.at(90.0), 8);
    const auto& importance = results.at("importance");
    EXPECT_EQ(importance.at("method"), "fanova");
    EXPECT_EQ(importance.at("budget"), 30.0);
    EXPECT_EQ(importance.at("results"), 8);
    ASSERT_EQ(importance.at("params").size(), 2u);
    std::set<std::string> names;
    double sum = 0;
    for (const auto& p : importance.at("params")) {
      names.insert(p.at("name").get<std::string>());
      sum += p.at("importance").get<double>();
    }
    EXPECT_EQ(names, (std::set<std::string>{"lr", "momentum"}));
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_GE(importance.at("params")[0].at("importance"), importance.at("params")[1].at("importance"));  // largest first
    EXPECT_NE(r.out.find("parameter importance (fANOVA of val_accuracy at 30 steps, 8 trials): " +
                         importance.at("params")[0].at("name").get<std::string>() + " "),
              std::string::npos)
        << r.out;
  }

  // --fusion off trains each trial alone with the same math: the same metrics.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  const auto alone = nlohmann::json::parse(slurp(dir_ + "/alone/results.json"));
  std::map<int, double> fused_metric;
  for (const auto& t : results.at("trials")) fused_metric[t.at("id")] = t.at("metric");
  for (const auto& t : alone.at("trials")) {
    EXPECT_NEAR(t.at("metric").get<double>(), fused_metric.at(t.at("id")), 1e-6) << t.at("id");
  }
  EXPECT_EQ(alone.at("best").at("id"), results.at("best").at("id"));

  // A finished experiment directory is not overwritten.
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/fused").code, 2);

  // status and export read the finished directory.
  const Result status = run("status " + dir_ + "/fused");
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("finished, 17 trials (17 completed)"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("parameter importance (fANOVA of val_accuracy at 30 steps, 8 trials): "), std::string::npos)
      << status.out;
  const Result csv = run("export " + dir_ + "/fused --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("id,status,budget,metric,seed,lr,momentum,best,weights,state_dict,error,checkpoint,"
                          "final_step,final_train_loss,final_val_accuracy,final_val_loss,model_params,"
                          "final_val_balanced_accuracy,final_val_f1\n", 0),
            0u)
      << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 18);
  EXPECT_NE(csv.out.find(",true,trials/"), std::string::npos);  // the best trial is marked
  {  // the first trial's row: its checkpoint and final metrics, as results.json has them
    const auto& t = results.at("trials")[0];
    const auto& f = t.at("final");
    const std::string row_end = "," + t.at("files").at("checkpoint").get<std::string>() + "," + f.at("step").dump() +
                                "," + f.at("train_loss").dump() + "," + f.at("val_accuracy").dump() + "," +
                                f.at("val_loss").dump() + "," + t.at("model_params").dump() + "," +
                                f.at("val_balanced_accuracy").dump() + "," + f.at("val_f1").dump() + "\n";
    // Its size: the MLP 784-32-10's weights and biases, as the exported model holds them.
    EXPECT_EQ(t.at("model_params"), 784 * 32 + 32 + 32 * 10 + 10);
    const std::string second_line = csv.out.substr(csv.out.find('\n') + 1);
    EXPECT_EQ(second_line.rfind("0,", 0), 0u) << second_line;
    EXPECT_NE(second_line.substr(0, second_line.find('\n') + 1).find(row_end), std::string::npos) << second_line << row_end;
  }
  // Each trial's history also as JSON lines: the same evaluations, one a line.
  for (const auto& t : results.at("trials")) {
    std::istringstream lines(slurp(dir_ + "/fused/trials/" + t.at("id").dump() + "/history.jsonl"));
    nlohmann::json history = nlohmann::json::array();
    for (std::string line; std::getline(lines, line);) history.push_back(nlohmann::json::parse(line));
    EXPECT_EQ(history, t.at("history")) << t.at("id");
  }
  // Every trial's weights are exported for C++ and Python.
  for (const auto& t : results.at("trials")) {
    for (const char* f : {"checkpoint", "weights", "state_dict"}) {
      EXPECT_TRUE(exists(dir_ + "/fused/" + t.at("files").at(f).get<std::string>())) << t.at("id") << " " << f;
    }
  }
  ASSERT_EQ(run("export " + dir_ + "/fused --output " + dir_ + "/export.json").code, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/export.json")), results);
  // Without --format, a file named *.csv gets CSV; --format decides over the name.
  ASSERT_EQ(run("export " + dir_ + "/fused --output " + dir_ + "/export.CSV").code, 0);
  EXPECT_EQ(slurp(dir_ + "/export.CSV"), csv.out);
  ASSERT_EQ(run("export " + dir_ + "/fused --format json --output " + dir_ + "/json.csv").code, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/json.csv")), results);
  // "-" is standard output; a link is written through, a pipe or device written to, never replaced.
  EXPECT_EQ(nlohmann::json::parse(run("export " + dir_ + "/fused --output -").out), results);
  ::symlink((dir_ + "/export.json").c_str(), (dir_ + "/link.json").c_str());
  ASSERT_EQ(run("export " + dir_ + "/fused --format csv --output " + dir_ + "/link.json").code, 0);
  struct stat link {};
  ASSERT_EQ(::lstat((dir_ + "/link.json").c_str(), &link), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode));
  EXPECT_EQ(slurp(dir_ + "/export.json").rfind("id,status", 0), 0u);
  // A link to a file not there yet (relative to the link's folder) makes that file.
  ::symlink("made.csv", (dir_ + "/dangling.csv").c_str());
  ASSERT_EQ(run("export " + dir_ + "/fused --format csv --output " + dir_ + "/dangling.csv").code, 0);
  ASSERT_EQ(::lstat((dir_ + "/dangling.csv").c_str(), &link), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode));
  EXPECT_EQ(slurp(dir_ + "/made.csv").rfind("id,status", 0), 0u);
  EXPECT_EQ(run("export " + dir_ + "/fused --output /dev/null").code, 0);
  // What export, status, plan and validate print is their product: standard
  // output that cannot be written (`> file` on a full disk) fails them, where
  // they said nothing and exited 0.
  for (const std::string args : {"export " + dir_ + "/fused", "export " + dir_ + "/fused --format csv",
                                 "status " + dir_ + "/fused", "validate " + sweep, "plan " + sweep,
                                 std::string("--help"), std::string("--version"), std::string("help run")}) {
    SCOPED_TRACE(args);
    const int code = std::system((std::string(HFTA_TUNE_BINARY) + " " + args + " >/dev/full 2>" + dir_ + "/full.err").c_str());
    EXPECT_TRUE(WIFEXITED(code) && WEXITSTATUS(code) == 1) << code;
    EXPECT_NE(slurp(dir_ + "/full.err").find("cannot write standard output: No space left on device"), std::string::npos)
        << slurp(dir_ + "/full.err");
  }
  struct stat null {};
  ASSERT_EQ(::stat("/dev/null", &null), 0);
  EXPECT_TRUE(S_ISCHR(null.st_mode));
  EXPECT_EQ(run("export " + dir_ + "/nowhere").code, 2);
  EXPECT_EQ(run("status " + dir_ + "/nowhere").code, 2);
  // Never over the experiment's own files (through a path or a link), nor into
  // a folder that is not there; a file of the user's own name inside is fine.
  const std::string before = slurp(dir_ + "/fused/results.json");
  ::symlink((dir_ + "/fused/sweep.json").c_str(), (dir_ + "/to-sweep.json").c_str());
  ::symlink((dir_ + "/fused/results.json.tmp").c_str(), (dir_ + "/dangling-own.csv").c_str());  // not there yet
  std::filesystem::create_directory(dir_ + "/fused/data");  // (as a table's sweep keeps its tables there)
  for (const std::string& own : {dir_ + "/fused/results.json", dir_ + "/fused/../fused/state.json",
                                 dir_ + "/fused/trials/0/trial.json", dir_ + "/to-sweep.json",
                                 dir_ + "/dangling-own.csv", dir_ + "/fused/data/test.csv",
                                 dir_ + "/fused/warm_start.json"}) {
    const Result refused = run("export " + dir_ + "/fused --format csv --output " + own);
    EXPECT_EQ(refused.code, 2) << own;
    EXPECT_NE(refused.err.find("which the experiment keeps; name another file"), std::string::npos) << refused.err;
  }
  EXPECT_EQ(slurp(dir_ + "/fused/results.json"), before);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/fused/sweep.json")).is_object(), true);
  // Exports racing into one file each land whole (they shared one temporary:
  // one's rename took the other's, which then failed).
  const std::string raced = dir_ + "/raced.csv", export_fused = std::string(HFTA_TUNE_BINARY) + " export " + dir_ + "/fused --output " + raced;
  EXPECT_EQ(shell("for round in 1 2 3 4; do " + export_fused + " & " + export_fused + " & " + export_fused +
                  " & for p in $(jobs -p); do wait $p || exit 1; done; done"),
            0);
  EXPECT_EQ(slurp(raced), run("export " + dir_ + "/fused --format csv").out);
  const Result no_folder = run("export " + dir_ + "/fused --output " + dir_ + "/not-there/x.csv");
  EXPECT_EQ(no_folder.code, 2);
  EXPECT_NE(no_folder.err.find(dir_ + "/not-there does not exist"), std::string::npos) << no_folder.err;
  // A file where the folder goes, or a link loop, is named for what it is.
  const Result under_file = run("export " + dir_ + "/fused --output " + dir_ + "/fused/results.json/x.csv");
  EXPECT_EQ(under_file.code, 2);
  EXPECT_NE(under_file.err.find("results.json is a file, not a folder"), std::string::npos) << under_file.err;
  ::symlink((dir_ + "/loop").c_str(), (dir_ + "/loop").c_str());
  const Result in_loop = run("export " + dir_ + "/fused --output " + dir_ + "/loop/x.csv");
  EXPECT_EQ(in_loop.code, 2);
  EXPECT_NE(in_loop.err.find("loop cannot be read: Too many levels of symbolic links"), std::string::npos)
      << in_loop.err;
  const Result status_loop = run("status " + dir_ + "/loop");
  EXPECT_EQ(status_loop.code, 2);
  EXPECT_NE(status_loop.err.find("cannot be read: Too many levels"), std::string::npos) << status_loop.err;
  // A sweep file given where the experiment goes: run is what takes it.
  const std::string sweep_file = write_sweep("given.yaml", kTinySweep);
  const Result status_file = run("status " + sweep_file);
  EXPECT_EQ(status_file.code, 2);
  EXPECT_NE(status_file.err.find("is a file, not a folder; to start the sweep it holds: hfta-tune run " + sweep_file +
                                 " --out DIR"),
            std::string::npos)
      << status_file.err;
  ASSERT_EQ(run("export " + dir_ + "/fused --format csv --output " + dir_ + "/fused/mine.csv").code, 0);
  EXPECT_EQ(slurp(dir_ + "/fused/mine.csv").rfind("id,status", 0), 0u);
}

const char* kTinyLanguageModel = R"(name: tiny-lm
task: {model: transformer_lm, batch_size: 16, options: {d_model: 32, heads: 2, layers: 1, ff: 64, seq_len: 32}}
metric: {name: val_perplexity, goal: minimize}
budget: {unit: steps, min: 20, max: 60}
search: {method: sha, trials: 3, eta: 3}
parameters:
  optimizer: {value: adam}
  lr: {values: [0.003, 0.001, 0.0003]}
  dropout: {value: 0.1}
)";

TEST_F(Cli, LanguageModelSweepRecordsPerplexity) {
  const std::string sweep = write_sweep("lm.yaml", kTinyLanguageModel);
  const Result r = run("run " + sweep + " --out " + dir_ + "/lm");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/lm/results.json"));
  ASSERT_EQ(results.at("trials").size(), 3u);
  for (const auto& t : results.at("trials")) {
    const auto& last = t.at("history").back();
    EXPECT_NEAR(last.at("val_perplexity").get<double>(), std::exp(last.at("val_loss").get<double>()), 1e-9);
    EXPECT_EQ(t.at("metric"), last.at("val_perplexity"));
  }
  // It learned: an untrained model's perplexity is about the vocabulary's size (about 114).
  EXPECT_LT(results.at("best").at("metric").get<double>(), 30);
  const auto& test = results.at("best").at("test");
  EXPECT_NEAR(test.at("perplexity").get<double>(), std::exp(test.at("loss").get<double>()), 1e-9);
  EXPECT_LT(test.at("perplexity").get<double>(), 30);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("on the test split: loss [0-9.]+, accuracy [0-9.]+, perplexity [0-9.]+")))
      << r.out;

  // The sequence length shapes the dataset every model of the sweep shares.
  std::string per_trial = kTinyLanguageModel;
  per_trial += "  seq_len: {values: [16, 32], fuse: false}\n";
  const Result refused = run("run " + write_sweep("lm2.yaml", per_trial) + " --out " + dir_ + "/lm2");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("parameters.seq_len"), std::string::npos) << refused.err;
}

// A language model's corpus is the environment's when the run starts: run
// keeps that text, and resume trains on it whatever the environment says then.
TEST_F(Cli, ALanguageModelSweepKeepsItsCorpusAndResumesOnIt) {
  // A corpus of the test's own, and the same bytes reversed: the same vocabulary.
  std::string text;
  const char* words[] = {"fused ", "models ", "train ", "together, ", "each ", "alone.\n", "Hyperband ", "halves "};
  for (std::uint32_t i = 0, state = 7; i < 4000; ++i) text += words[(state = state * 1103515245u + 12345u) >> 29];
  std::ofstream(dir_ + "/a.txt") << text;
  std::ofstream(dir_ + "/b.txt") << std::string(text.rbegin(), text.rend());
  const std::string sweep = write_sweep("lm.yaml", kTinyLanguageModel);
  {
    const ScopedEnv corpus("HFTA_TEXT_CORPUS", dir_ + "/a.txt");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
    const ScopedEnv cut("HFTA_TUNE_SIGINT_AFTER_PIECES", "2");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cut --workers 1").code, 1);
  }
  const auto kept = nlohmann::json::parse(slurp(dir_ + "/cut/data/corpus.json"));
  EXPECT_EQ(kept.at("source"), std::filesystem::absolute(dir_ + "/a.txt").lexically_normal().string());
  std::set<int> bytes(text.begin(), text.end());
  EXPECT_EQ(kept.at("vocab").get<std::vector<int>>(), std::vector<int>(bytes.begin(), bytes.end()));
  EXPECT_EQ(slurp(dir_ + "/cut/data/corpus.txt"), text);
  {
    const ScopedEnv corpus("HFTA_TEXT_CORPUS", dir_ + "/b.txt");
    const Result resumed = run("resume " + dir_ + "/cut");
    ASSERT_EQ(resumed.code, 0) << resumed.err;
    EXPECT_NE(resumed.out.find("HFTA_TEXT_CORPUS names " + dir_ + "/b.txt, but this sweep trains on the corpus its run "
                               "kept in " + dir_ + "/cut/data/corpus.txt"),
              std::string::npos)
        << resumed.out;
  }
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
  EXPECT_EQ(results(dir_ + "/cut").at("data").at("vocab"), "data/corpus.json");
  // A user rebuilds a trial in PyTorch from the experiment alone (the vocabulary from corpus.json).
  if (const auto loaded = python("import plain_models\nnet = plain_models.from_experiment(\"" + dir_ +
                                 "/cut\", 1)\nprint(net[-2].out_features)\n")) {
    EXPECT_EQ(*loaded, std::to_string(bytes.size()) + "\n");
  }

  // A kept corpus changed from outside is refused, as a kept table is.
  {
    const ScopedEnv corpus("HFTA_TEXT_CORPUS", dir_ + "/a.txt");
    const ScopedEnv cut("HFTA_TUNE_SIGINT_AFTER_PIECES", "2");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/edited --workers 1").code, 1);
  }
  std::filesystem::copy(dir_ + "/edited", dir_ + "/vocab", std::filesystem::copy_options::recursive);
  std::filesystem::copy(dir_ + "/edited", dir_ + "/gone", std::filesystem::copy_options::recursive);
  std::ofstream(dir_ + "/edited/data/corpus.txt", std::ios::app) << "!";
  const Result refused = run("resume " + dir_ + "/edited");
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("/edited/data/corpus.txt is not the corpus run kept"), std::string::npos) << refused.err;
  EXPECT_NE(run("status " + dir_ + "/edited").out.find("is not the corpus run kept"), std::string::npos);
  // Its vocabulary edited (what a user decodes tokens by), or data/ gone whole:
  // refused too, not trained on the environment's corpus.
  auto record = nlohmann::json::parse(slurp(dir_ + "/vocab/data/corpus.json"));
  record["vocab"].erase(record["vocab"].begin());
  std::ofstream(dir_ + "/vocab/data/corpus.json") << record.dump();
  const Result vocab = run("resume " + dir_ + "/vocab");
  EXPECT_EQ(vocab.code, 1);
  EXPECT_NE(vocab.err.find("corpus.json's vocab is not the bytes of data/corpus.txt"), std::string::npos) << vocab.err;
  std::filesystem::remove_all(dir_ + "/gone/data");
  const ScopedEnv other("HFTA_TEXT_CORPUS", dir_ + "/b.txt");
  const Result gone = run("resume " + dir_ + "/gone");
  EXPECT_EQ(gone.code, 1);
  EXPECT_NE(gone.err.find("/gone/data/corpus.json is gone or damaged"), std::string::npos) << gone.err;
}

// BERT's exported model, rebuilt from the experiment: its vocabulary and the mask token.
TEST_F(Cli, ABertTrialRebuildsInPyTorchFromTheExperiment) {
  const Result r = run("run " + write_sweep("bert.yaml", R"(name: tiny-bert
task: {model: bert, batch_size: 16, options: {size: tiny, seq_len: 16}}
metric: {name: val_perplexity, goal: minimize}
budget: {unit: steps, min: 5, max: 5}
search: {method: random, trials: 1}
parameters:
  lr: {value: 0.001}
  optimizer: {value: adam}
)") + " --out " + dir_ + "/bert");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto vocab = nlohmann::json::parse(slurp(dir_ + "/bert/data/corpus.json")).at("vocab").size();
  const auto loaded = python("import plain_models\nnet = plain_models.from_experiment(\"" + dir_ +
                             "/bert\", 0)\nprint(net[0].token.num_embeddings)\n");
  if (!loaded) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  EXPECT_EQ(*loaded, std::to_string(vocab + 1) + "\n");
}

// A trial's exported model, rebuilt in PyTorch from the experiment directory
// with plain_models.from_experiment and fed the test images as
// plain_models.fashion_mnist_inputs prepares them (standardised, padded to 32
// for MobileNetV3), classifies them as results.json says the trial did.
TEST_F(Cli, AnExportedTrialInPyTorchScoresTheTestSplitAsReported) {
  const std::string sweep = write_sweep("mnv3.yaml", R"(name: tiny-mnv3
task: {model: mobilenet_v3_small, batch_size: 64, validation_size: 1000, options: {width_mult: 0.25}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 30, max: 30}
search: {method: random, trials: 2}
parameters:
  lr: {values: [0.05, 0.01]}
)");
  const Result r = run("run " + sweep + " --out " + dir_ + "/e");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto best = results(dir_ + "/e").at("best");
  const auto score = python(R"(import gzip, plain_models
def idx(name, skip):
    with gzip.open("/usr/share/datasets/fashion-mnist/" + name) as f:
        return torch.frombuffer(bytearray(f.read()[skip:]), dtype=torch.uint8)
images = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)
labels = idx("t10k-labels-idx1-ubyte.gz", 8).long()
net = plain_models.from_experiment(")" + dir_ + "/e\", " + best.at("id").dump() + R"()
with torch.no_grad():
    guessed = net(plain_models.fashion_mnist_inputs(images, "mobilenet_v3_small")).argmax(1)
print((guessed == labels).sum().item())
)");
  if (!score) GTEST_SKIP() << "/usr/bin/python3 cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  EXPECT_EQ(*score, std::to_string(std::llround(best.at("test").at("accuracy").get<double>() * 10000)) + "\n");
}

const char* kTinyGan = R"(name: tiny-gan
seed: 2
task: {model: dcgan, batch_size: 32, options: {nz: 8, ngf: 4, ndf: 4}}
metric: {name: val_fid, goal: minimize}
budget: {unit: steps, min: 10, max: 30}
search: {method: sha, trials: 3, eta: 3}
parameters:
  optimizer: {value: adam}
  lr: {values: [0.002, 0.0005, 0.0001]}
  beta1: {value: 0.5}
)";

TEST_F(Cli, GanSweepRecordsFidAndTrainsEachTrialAsAlone) {
  const Result gan = run("run " + write_sweep("gan.yaml", kTinyGan) + " --out " + dir_ + "/gan");
  ASSERT_EQ(gan.code, 0) << gan.err;
  EXPECT_TRUE(std::regex_search(gan.out, std::regex("on the test split: FID [0-9.]+ \\(the discriminator's loss [0-9.]+, "
                                                    "accuracy [0-9.]+\\)")))
      << gan.out;
  EXPECT_NE(run("status " + dir_ + "/gan").out.find("on the test split: FID "), std::string::npos);
  const Result alone = run("run " + write_sweep("gan.yaml", kTinyGan) + " --fusion off --out " + dir_ + "/alone");
  ASSERT_EQ(alone.code, 0) << alone.err;
  const auto fused = nlohmann::json::parse(slurp(dir_ + "/gan/results.json"));
  const auto one = nlohmann::json::parse(slurp(dir_ + "/alone/results.json"));
  ASSERT_EQ(fused.at("trials").size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& t = fused.at("trials")[i];
    const auto& last = t.at("history").back();
    EXPECT_EQ(t.at("metric"), last.at("val_fid"));
    EXPECT_GT(last.at("d_loss").get<double>(), 0);
    EXPECT_EQ(last.at("g_loss"), last.at("train_loss"));  // the metric's name for the generator's loss
    // Bit for bit, whatever arrays the probe chose.
    EXPECT_EQ(one.at("trials")[i].at("history"), t.at("history")) << i;
    EXPECT_EQ(one.at("trials")[i].at("metric"), t.at("metric")) << i;
  }
  EXPECT_EQ(one.at("best").at("id"), fused.at("best").at("id"));
  EXPECT_GT(fused.at("best").at("test").at("fid").get<double>(), 0);
}

TEST_F(Cli, BatchesPreparedAheadGiveTheSameResults) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const Result in_place = run("run " + sweep + " --out " + dir_ + "/in-place");
  const Result ahead = run("run " + sweep + " --out " + dir_ + "/ahead --prefetch 3");
  ASSERT_EQ(in_place.code, 0) << in_place.err;
  ASSERT_EQ(ahead.code, 0) << ahead.err;
  EXPECT_EQ(in_place.out.find("prepared"), std::string::npos) << in_place.out;  // none on the CPU by default
  EXPECT_NE(ahead.out.find("batches for cpu prepared 3 ahead by a background thread"), std::string::npos) << ahead.out;
  expect_same_results(dir_ + "/ahead", dir_ + "/in-place");
  // Cut mid-rung, then resumed with another count: the resumed trials seek to their checkpoints' steps.
  ASSERT_NO_FATAL_FAILURE(expect_cut_mid_rung_resumes_as_whole("--prefetch 3", "--prefetch 1"));
  // Token sequences (labels [N, T]) and a GAN's images: the same too. Trials
  // alone: a GAN's convolutions and batch norms round differently at
  // different array sizes, and prefetching is what is compared.
  for (const auto& [name, text] : {std::pair{"lm", kTinyLanguageModel}, std::pair{"gan", kTinyGan}}) {
    SCOPED_TRACE(name);
    const std::string file = write_sweep(std::string(name) + ".yaml", text);
    ASSERT_EQ(run("run " + file + " --fusion off --out " + dir_ + "/" + name).code, 0);
    ASSERT_EQ(run("run " + file + " --fusion off --prefetch 2 --out " + dir_ + "/" + name + "-ahead").code, 0);
    expect_same_results(dir_ + "/" + name + "-ahead", dir_ + "/" + name);
  }
}

TEST_F(Cli, TinyBudgetsOtherOptimizersAndLabelSmoothingTrain) {
  const std::string sweep = write_sweep("samples.yaml", R"(name: samples
task: {model: mlp, batch_size: 64, options: {depth: 1, width: 16}}
metric: {name: val_loss, goal: minimize}
budget: {unit: samples, min: 32, max: 288}
search: {method: sha, trials: 3, eta: 3}
parameters:
  lr: {values: [0.01, 0.001, 0.005]}
  optimizer: {value: rmsprop}
  label_smoothing: {value: 0.1}
  schedule: {values: [cosine, plateau, multistep]}
  milestones: {value: "0.3,0.6"}
  grad_clip: {value: 1.0}
)");
  const Result r = run("run " + sweep + " --out " + dir_ + "/samples");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/samples/results.json"));
  EXPECT_EQ(results.at("trials").size(), 3u);
  EXPECT_EQ(results.at("metric").at("goal"), "minimize");
}

TEST_F(Cli, MultiStepKeepsTheFullLearningRateUntilItsFirstMilestone) {
  // One trial (the same seed, data and initial weights in each sweep),
  // evaluated at 40 and 120 steps: before the first milestone (60 or 108
  // steps of 120) it trains as at a constant rate, after it at a tenth of the rate.
  const std::string base = R"(name: multistep
seed: 4
task: {model: mlp, batch_size: 64, validation_size: 500, options: {depth: 1, width: 16}}
metric: {name: val_loss, goal: minimize}
budget: {unit: steps, min: 40, max: 120}
search: {method: sha, trials: 1, eta: 3}
parameters:
  lr: {value: 0.05}
)";
  auto history = [&](const std::string& name, const std::string& schedule) {
    const Result r = run("run " + write_sweep(name + ".yaml", base + schedule) + " --out " + dir_ + "/" + name);
    EXPECT_EQ(r.code, 0) << r.err;
    return results(dir_ + "/" + name).at("trials")[0].at("history");
  };
  const auto constant = history("constant", "");
  const std::string multistep = "  schedule: {value: multistep}\n  gamma: {value: 0.1}\n";
  const auto early = history("early", multistep + "  milestones: {value: \"0.5,0.75\"}\n");
  const auto late = history("late", multistep + "  milestones: {value: [0.9, 0.95]}\n");  // as MultiStepLR's
  EXPECT_EQ(history("late-text", multistep + "  milestones: {value: \"0.9,0.95\"}\n"), late);
  ASSERT_EQ(constant.size(), 2u);
  ASSERT_EQ(early.size(), 2u);
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(early[0], constant[0]);
  EXPECT_EQ(late[0], constant[0]);
  EXPECT_NE(early[1].at("train_loss"), constant[1].at("train_loss"));
  EXPECT_NE(late[1].at("train_loss"), early[1].at("train_loss"));
}

TEST_F(Cli, EpsReachesAdagradAndAdadeltaAndDefaultsToPyTorchs) {
  // The same trial (seed, data, initial weights) with eps unset, set to
  // PyTorch's default for its optimizer, and set far from it.
  for (const auto& [optimizer, pytorch_eps] : std::vector<std::pair<std::string, std::string>>{
           {"adagrad", "1.0e-10"}, {"adadelta", "1.0e-6"}}) {
    SCOPED_TRACE(optimizer);
    auto history = [&](const std::string& name, const std::string& eps) {
      const std::string sweep = "name: eps\nseed: 5\ntask: {model: mlp, batch_size: 64, validation_size: 500, "
                                "options: {depth: 1, width: 8}}\nmetric: {name: val_loss, goal: minimize}\n"
                                "budget: {unit: steps, max: 40}\nsearch: {method: random, trials: 1}\n"
                                "parameters:\n  optimizer: {value: " + optimizer + "}\n  lr: {value: 0.5}\n" + eps;
      const Result r = run("run " + write_sweep(name + ".yaml", sweep) + " --out " + dir_ + "/" + name);
      EXPECT_EQ(r.code, 0) << r.err;
      return results(dir_ + "/" + name).at("trials")[0].at("history");
    };
    const auto unset = history(optimizer + "-unset", "");
    EXPECT_EQ(history(optimizer + "-default", "  eps: {value: " + pytorch_eps + "}\n"), unset);
    EXPECT_NE(history(optimizer + "-large", "  eps: {value: 1.0}\n"), unset);
  }
}

TEST_F(Cli, AnArrayOutOfMemoryWhileReportingTrainsAgainOnlyWhatItHadNotReported) {
  // Device memory runs out (injected) as a promoted array saves its trials,
  // after the first is on disk and reported: the array is split, and only the
  // others train again, each once, from their own states.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_OOM_AFTER_REPORTS", "1", 1);
  const Result split = run("run " + sweep + " --out " + dir_ + "/split --workers 1");
  unsetenv("HFTA_TUNE_OOM_AFTER_REPORTS");
  ASSERT_EQ(split.code, 0) << split.err;
  EXPECT_EQ(split.out.find("failed"), std::string::npos) << split.out;
  expect_same_results(dir_ + "/split", dir_ + "/whole");
}

TEST_F(Cli, KeepCheckpointsLiveRemovesTheCheckpointsOfTrialsDoneTrainingAndEndsAsTheWholeRun) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  // Stopped inside the sweep: a trial its rung passed over has only its
  // weights left; one that may still train keeps its checkpoint. Stopped as
  // Ctrl-C stops it, by a count: first after its first piece of training
  // (once its arrays' sizes are recorded: arrays of one would spend every
  // piece below in the first round), then three pieces into the resume, past
  // the second round, whose arrays are one each.
  {
    const ScopedEnv first_round("HFTA_TUNE_SIGINT_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/live --workers 1 --keep-checkpoints live").code, 1);
  }
  {
    const ScopedEnv later("HFTA_TUNE_SIGINT_AFTER_PIECES", "3");
    ASSERT_EQ(run("resume " + dir_ + "/live --workers 1").code, 1);
  }
  ASSERT_FALSE(exists(dir_ + "/live/results.json"));
  int dropped = 0, kept = 0;
  for (int id = 0; id < 22; ++id) {
    const std::string trial = dir_ + "/live/trials/" + std::to_string(id);
    if (!exists(trial + "/trial.json") || !exists(trial + "/weights.pt")) continue;
    (exists(trial + "/checkpoint.pt") ? kept : dropped) += 1;
  }
  EXPECT_GT(dropped, 0);
  EXPECT_GT(kept, 0);
  // Resumed without the flag: run.json keeps it. The results, the best
  // trial's test evaluation (from its weights) included, are the whole run's.
  const Result resumed = run("resume " + dir_ + "/live");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("--keep-checkpoints live: removed"), std::string::npos) << resumed.out;
  expect_same_results(dir_ + "/live", dir_ + "/whole");
  const auto live = results(dir_ + "/live");
  for (const auto& t : live.at("trials")) {
    const std::string trial = dir_ + "/live/trials/" + t.at("id").dump();
    EXPECT_FALSE(exists(trial + "/checkpoint.pt")) << trial;
    EXPECT_FALSE(exists(trial + "/checkpoint.prev.pt")) << trial;
    EXPECT_TRUE(exists(trial + "/weights.pt")) << trial;
    EXPECT_FALSE(t.at("files").contains("checkpoint"));
  }
  EXPECT_TRUE(results(dir_ + "/whole").at("trials")[0].at("files").contains("checkpoint"));
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/bad --keep-checkpoints some").code, 2);
}

TEST_F(Cli, SeveralWorkersTrainARoundsArraysWithTheSameResultsAsOne) {
  // Four brackets whose rounds hold several arrays; a failing trial too, whose
  // report, like every other, reaches the scheduler in array order.
  std::string text = kTinySweep;
  text.replace(text.find("max: 90"), 7, "max: 270");
  text.replace(text.find("seed: 1"), 7, "seed: 1\nfusion: {max_array: 4}");
  const std::string sweep = write_sweep("workers.yaml", text);
  setenv("HFTA_TUNE_FAULT_TRIALS", "3", 1);
  const Result one = run("run " + sweep + " --out " + dir_ + "/one");
  const Result three = run("run " + sweep + " --out " + dir_ + "/three --workers 3");
  unsetenv("HFTA_TUNE_FAULT_TRIALS");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(three.code, 0) << three.err;
  const auto a = nlohmann::json::parse(slurp(dir_ + "/one/results.json"));
  const auto b = nlohmann::json::parse(slurp(dir_ + "/three/results.json"));
  ASSERT_EQ(a.at("trials").size(), b.at("trials").size());
  for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
    SCOPED_TRACE("trial " + a.at("trials")[i].at("id").dump());
    EXPECT_EQ(b.at("trials")[i].at("history"), a.at("trials")[i].at("history"));
    EXPECT_EQ(b.at("trials")[i].at("status"), a.at("trials")[i].at("status"));
    EXPECT_EQ(b.at("trials")[i].at("budget"), a.at("trials")[i].at("budget"));
  }
  EXPECT_EQ(b.at("trials")[3].at("status"), "failed");
  EXPECT_EQ(b.at("best"), a.at("best"));
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/zero --workers 0").code, 2);
  // The plan shows one worker's arrays, and says that several may cut them.
  const std::string note = "note: with 3 workers, a round's arrays may be cut further";
  EXPECT_NE(three.out.find(note), std::string::npos) << three.out;
  EXPECT_NE(run("plan " + sweep + " --workers 3").out.find(note), std::string::npos);
  EXPECT_EQ(run("plan " + sweep + " --workers 1").out.find("note: with"), std::string::npos);
  // Each plans within its share of the memory, said beside the device's free memory.
  EXPECT_TRUE(std::regex_search(three.out, std::regex("memory: arrays planned within [0-9]+ MiB a worker \\(90% of its "
                                                      "share, 1/3 of the [0-9]+ MiB free on cpu, shared by 3 workers\\)")))
      << three.out;
  EXPECT_TRUE(std::regex_search(run("plan " + sweep + " --workers 1").out,
                                std::regex("memory: arrays planned within [0-9]+ MiB \\(90% of the free memory of cpu\\)")));
  const auto cores = std::thread::hardware_concurrency();
  EXPECT_NE(run("plan " + sweep + " --workers " + std::to_string(cores + 1)).out.find(
                "note: " + std::to_string(cores + 1) + " workers on " + std::to_string(cores) + " CPU cores take turns"),
            std::string::npos);
}

TEST_F(Cli, CudaSweepsTrainOnTheGpuAsOnTheCpu) {
  if (!torch::cuda::is_available()) {
    // Without a GPU, asking for one is refused before anything is written.
    const Result r = run("run " + write_sweep("tiny.yaml", kTinySweep) + " --device cuda --out " + dir_ + "/gpu");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("no CUDA GPU"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir_ + "/gpu"));
    GTEST_SKIP() << "no CUDA device: the GPU run is checked where one is (scripts/gpu/build-and-bench.sh)";
  }
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cpu --workers 1").code, 0);
  const Result gpu = run("run " + sweep + " --device cuda --out " + dir_ + "/gpu");
  ASSERT_EQ(gpu.code, 0) << gpu.err;
  EXPECT_NE(gpu.out.find("copied to cuda:0 once"), std::string::npos) << gpu.out;
  // Batches streamed from pinned host memory instead: the same numbers as batches cut on the GPU.
  const Result streamed = run("run " + sweep + " --device cuda --prefetch 2 --out " + dir_ + "/streamed");
  ASSERT_EQ(streamed.code, 0) << streamed.err;
  EXPECT_NE(streamed.out.find("kept on the host; batches for cuda:0 prepared 2 ahead"), std::string::npos)
      << streamed.out;
  expect_same_results(dir_ + "/streamed", dir_ + "/gpu");
  const auto a = nlohmann::json::parse(slurp(dir_ + "/cpu/results.json"));
  const auto b = nlohmann::json::parse(slurp(dir_ + "/gpu/results.json"));
  ASSERT_EQ(a.at("trials").size(), b.at("trials").size());
  for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
    // Other kernels, other rounding, and dropout masks drawn on the GPU by its own
    // generators (fusion/fused_dropout.h): the trials learn alike, not identically.
    EXPECT_NEAR(b.at("trials")[i].at("metric").get<double>(), a.at("trials")[i].at("metric").get<double>(), 0.03) << i;
  }
  // Resumed on the GPU from a directory whose results were dropped: the same trials.
  std::remove((dir_ + "/gpu/results.json").c_str());
  ASSERT_EQ(run("resume " + dir_ + "/gpu --device cuda").code, 0);
  // fp16 autocast with per-model loss scaling: the same trials, to half precision's accuracy.
  std::string text = kTinySweep;
  const std::string task = "task: {model: mlp, ";
  text.replace(text.find(task), task.size(), "task: {model: mlp, precision: fp16, ");
  const Result half = run("run " + write_sweep("fp16.yaml", text) + " --device cuda --out " + dir_ + "/fp16");
  ASSERT_EQ(half.code, 0) << half.err;
  const auto c = nlohmann::json::parse(slurp(dir_ + "/fp16/results.json"));
  for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
    EXPECT_NEAR(c.at("trials")[i].at("metric").get<double>(), a.at("trials")[i].at("metric").get<double>(), 0.03) << i;
  }
}

TEST_F(Cli, MixedPrecisionSweepsTrainAndFp16WithoutAGpuIsRefused) {
  std::string text = kTinySweep;
  const std::string task = "task: {model: mlp, ";
  text.replace(text.find(task), task.size(), "task: {model: mlp, precision: bf16, ");
  const Result bf16 = run("run " + write_sweep("bf16.yaml", text) + " --out " + dir_ + "/bf16");
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  EXPECT_NE(bf16.out.find("in bf16 autocast"), std::string::npos) << bf16.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/bf16/results.json"));
  EXPECT_GT(results.at("best").at("metric").get<double>(), 0.7);  // it learns
  // A changed precision changes every trial: resume refuses it.
  std::remove((dir_ + "/bf16/results.json").c_str());
  text.replace(text.find("bf16"), 4, "fp32");
  std::ofstream(dir_ + "/bf16/sweep.yaml") << text;
  const Result changed = run("resume " + dir_ + "/bf16");
  EXPECT_EQ(changed.code, 2);
  EXPECT_NE(changed.err.find("task.precision"), std::string::npos) << changed.err;

  text.replace(text.find("fp32"), 4, "fp16");
  const Result fp16 = run("run " + write_sweep("fp16.yaml", text) + " --out " + dir_ + "/fp16");
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(fp16.code, 2);
    EXPECT_NE(fp16.err.find("fp16.yaml:3:"), std::string::npos) << fp16.err;  // where the sweep asks for it
    EXPECT_NE(fp16.err.find("task.precision: fp16 needs a CUDA device"), std::string::npos) << fp16.err;
    EXPECT_FALSE(exists(dir_ + "/fp16"));
    const Result plan = run("plan " + write_sweep("fp16.yaml", text));
    EXPECT_EQ(plan.code, 2);
    EXPECT_NE(plan.err.find("fp16.yaml:3:"), std::string::npos) << plan.err;
  }
  text.replace(text.find("fp16"), 4, "fp8");
  const Result unknown = run("validate " + write_sweep("fp8.yaml", text));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("fp8.yaml:3:"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("task.precision"), std::string::npos) << unknown.err;
}

// A sweep whose every trial failed is no success (Ray Tune raises TuneError):
// exit 1, naming the first error, with every trial's in results.json.
TEST_F(Cli, ASweepWhoseEveryTrialFailedExits1) {
  std::string text = kTinySweep;
  text.replace(text.find("{method: hyperband, eta: 3}"), 27, "{method: random, trials: 2}");
  const std::string sweep = write_sweep("two.yaml", text);
  const ScopedEnv faults("HFTA_TUNE_FAULT_TRIALS", "0,1");
  const Result r = run("run " + sweep + " --out " + dir_ + "/failed");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("hfta-tune run: every trial failed (trial 0: injected fault", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("); results.json records each one's error\n"), std::string::npos) << r.err;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/failed/results.json"));
  EXPECT_EQ(results.at("finished"), true);
  ASSERT_EQ(results.at("trials").size(), 2u);
  for (const auto& t : results.at("trials")) EXPECT_EQ(t.at("status"), "failed");
  // One trial that trains is success enough.
  const ScopedEnv one_fault("HFTA_TUNE_FAULT_TRIALS", "1");
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/one").code, 0);
}

TEST_F(Cli, ATrialThatThrowsFailsAloneWithItsMessageAndTheSweepGoesOn) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_FAULT_TRIALS", "2", 1);  // trial 2's training throws, as a shape error would
  const Result r = run("run " + sweep + " --out " + dir_ + "/faulty");
  unsetenv("HFTA_TUNE_FAULT_TRIALS");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("trial 2 failed: injected fault"), std::string::npos) << r.out;
  const auto whole = nlohmann::json::parse(slurp(dir_ + "/whole/results.json"));
  const auto faulty = nlohmann::json::parse(slurp(dir_ + "/faulty/results.json"));
  ASSERT_EQ(faulty.at("trials").size(), whole.at("trials").size());
  for (std::size_t i = 0; i < whole.at("trials").size(); ++i) {
    const auto& t = faulty.at("trials")[i];
    if (t.at("id") == 2) {
      EXPECT_EQ(t.at("status"), "failed");
      EXPECT_NE(t.at("error").get<std::string>().find("injected fault"), std::string::npos);
      EXPECT_TRUE(t.at("metric").is_null());
      // It failed in its first rung: it reached no budget and has no files.
      EXPECT_EQ(t.at("budget"), 0);
      EXPECT_TRUE(t.at("files").empty()) << t.at("files");
    } else if (whole.at("trials")[i].at("budget") == t.at("budget")) {
      // Its array-mates trained as they would have anyway.
      EXPECT_EQ(t.at("metric"), whole.at("trials")[i].at("metric")) << t.at("id");
    }
  }
  EXPECT_NE(faulty.at("best").at("id"), 2);
  // The CSV names the error, in its last field: trial 2 has neither metric nor files.
  const Result csv = run("export " + dir_ + "/faulty --format csv");
  EXPECT_TRUE(std::regex_search(csv.out, std::regex("\n2,failed,0(\\.0)?,,[0-9]+,[^\n]*,false,,,[^\n]*injected fault")))
      << csv.out;

  // Resumed, without the fault: the failed trial is not trained again, it stays failed.
  std::remove((dir_ + "/faulty/results.json").c_str());
  const Result resumed = run("resume " + dir_ + "/faulty");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const auto again = nlohmann::json::parse(slurp(dir_ + "/faulty/results.json"));
  EXPECT_EQ(again.at("trials"), faulty.at("trials"));
  EXPECT_EQ(again.at("best"), faulty.at("best"));
}

TEST_F(Cli, PackingNeverChangesATrialsNumbers) {
  // Arrays of 1 against arrays as large as the sweep's rungs (up to 17 models).
  std::string one = kTinySweep;
  one.replace(one.find("seed: 1"), 7, "seed: 1\nfusion: {max_array: 1}");
  ASSERT_EQ(run("run " + write_sweep("tiny.yaml", kTinySweep) + " --out " + dir_ + "/fused").code, 0);
  ASSERT_EQ(run("run " + write_sweep("one.yaml", one) + " --out " + dir_ + "/one").code, 0);
  const auto fused = nlohmann::json::parse(slurp(dir_ + "/fused/results.json"));
  const auto alone = nlohmann::json::parse(slurp(dir_ + "/one/results.json"));
  ASSERT_EQ(fused.at("trials").size(), alone.at("trials").size());
  for (std::size_t i = 0; i < fused.at("trials").size(); ++i) {
    EXPECT_EQ(fused.at("trials")[i].at("history"), alone.at("trials")[i].at("history")) << i;
  }
}

TEST_F(Cli, APromotedTrialTrainsAsIfStraightThrough) {
  // Successive halving trains trial ids 0-2 to 1 epoch, then the best on to 3;
  // random search trains the same trials (same sweep seed) to 3 epochs in one
  // go. Reduce-on-plateau rates and early-stopping patience carry across the
  // rungs, so the promoted trial's every evaluation is the straight one's.
  // Plateau schedules that cut the rate at every evaluation without a gain.
  auto plateau = [](const std::string& lr_max, const std::string& factor) {
    return "parameters:\n  lr: {distribution: log_uniform, min: 0.05, max: " + lr_max +
           "}\n  momentum: {value: 0.9}\n  schedule: {value: plateau}\n  plateau_patience: {value: 0}\n"
           "  plateau_factor: {value: " + factor + "}\n";
  };
  const std::string common = R"(seed: 4
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_loss, goal: minimize}
budget: {unit: epochs, min: 1, max: 3}
early_stopping: {patience: 2, min_delta: 0.02}
)" + plateau("0.5", "0.5");
  // In steps, rungs end between epoch boundaries (157 steps of 64 from 10,000
  // images): the rung end at step 100 is evaluated, but only looks. Had it
  // counted, 157 would have had to beat it: every trial stopped there (a
  // min_delta none meets), and without early stopping, trial 3's rate was cut
  // at 157 (0.5393 at 300 against 0.6144 straight).
  const std::string in_steps = R"(seed: 8
task: {model: mlp, batch_size: 64, validation_size: 50000, options: {depth: 1, width: 16}}
metric: {name: val_loss, goal: minimize}
budget: {unit: steps, min: 100, max: 300}
early_stopping: {patience: 1, min_delta: 0.3}
)" + plateau("0.8", "0.1");
  // With task.eval_steps, evaluations every 50 steps, the rung end among them:
  // early stopping acts inside a budget shorter than an epoch (promoted trials
  // 3 and 5 stop at 200 and 250, as straight).
  std::string every_50 = in_steps;
  every_50.replace(every_50.find("width: 16}"), 10, "width: 16}, eval_steps: 50");
  every_50.replace(every_50.find("patience: 1, min_delta: 0.3"), 27, "patience: 2, min_delta: 0.05");
  struct Case {
    std::string name, sweep, trials;
    std::int64_t first_rung;  // steps
    std::int64_t looks;       // the step of a rung end that only looks (-1: none)
    int promoted;
    int stopped;  // -1: either way (a trajectory at lr 0.4 and momentum 0.9 turns on the CPU's rounding)
    bool noted;   // that the patience cannot act
  };
  for (const Case& c : {Case{"epochs", common, "3", 196, -1, 1, -1, false}, Case{"steps", in_steps, "9", 100, 100, 3, 0, true},
                        Case{"every-50", every_50, "9", 100, -1, 3, 2, false}}) {
    SCOPED_TRACE(c.name);
    const std::string sha = write_sweep(c.name + "-sha.yaml",
                                        "name: sha\nsearch: {method: sha, trials: " + c.trials + ", eta: 3}\n" + c.sweep);
    const std::string straight =
        write_sweep(c.name + "-straight.yaml", "name: straight\nsearch: {method: random, trials: " + c.trials + "}\n" + c.sweep);
    const Result halving = run("run " + sha + " --out " + dir_ + "/" + c.name + "-sha");
    ASSERT_EQ(halving.code, 0);
    // Said once: run's plan says it (plan knows Fashion-MNIST's size), and the tuner does not again.
    const std::string idle = "note: early_stopping.patience 1 waits for 2 evaluations, and budget.max leaves 1 "
                             "before its end (one every 157 steps at batch 64), so it acts on no trial before budget.max: set task.eval_steps";
    EXPECT_EQ(halving.out.find(idle) != std::string::npos, c.noted) << halving.out;
    EXPECT_EQ(halving.out.find(idle), halving.out.rfind(idle)) << halving.out;
    EXPECT_EQ(run("plan " + sha).out.find(idle) != std::string::npos, c.noted);
    ASSERT_EQ(run("run " + straight + " --out " + dir_ + "/" + c.name + "-straight").code, 0);
    const auto halved = results(dir_ + "/" + c.name + "-sha");
    const auto whole = results(dir_ + "/" + c.name + "-straight");
    int promoted = 0, stopped = 0;
    for (std::size_t i = 0; i < halved.at("trials").size(); ++i) {
      const auto& t = halved.at("trials")[i];
      if (t.at("history").back().at("step") <= c.first_rung) continue;
      ++promoted;
      stopped += t.at("status") == "stopped";
      // Every evaluation the straight run made, and the rung end between them.
      nlohmann::json same = nlohmann::json::array();
      for (const auto& point : t.at("history")) {
        if (point.at("step") != c.looks) same.push_back(point);
      }
      EXPECT_EQ(same, whole.at("trials")[i].at("history")) << t.at("id");
      EXPECT_EQ(t.at("metric"), whole.at("trials")[i].at("metric"));
      EXPECT_EQ(t.at("status"), whole.at("trials")[i].at("status"));
      EXPECT_EQ(t.at("budget"), whole.at("trials")[i].at("budget"));
    }
    EXPECT_EQ(promoted, c.promoted);
    if (c.stopped >= 0) EXPECT_EQ(stopped, c.stopped);
  }
}

TEST_F(Cli, ATrialThatStopsEarlyReportsTheBudgetItReached) {
  // 196 steps an epoch, an evaluation at each: with patience 1 and a min_delta
  // no second epoch improves by, the two learning trials stop at their second
  // evaluation (step 392); lr 60 diverges at its first (step 196). A rung of
  // 980 steps is what they were given, not what they trained.
  const std::string sweep = write_sweep("stops.yaml", R"(name: stops
seed: 3
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_loss, goal: minimize}
budget: {unit: steps, min: 980, max: 980}
search: {method: grid}
parameters:
  lr: {distribution: grid, values: [0.01, 0.1, 60.0]}
early_stopping: {patience: 1, min_delta: 0.5, divergence: 10}
)");
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/stops").code, 0);
  const auto trials = results(dir_ + "/stops").at("trials");
  ASSERT_EQ(trials.size(), 3u);
  const std::vector<std::pair<std::string, double>> want = {{"stopped", 392}, {"stopped", 392}, {"diverged", 196}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("trial " + std::to_string(i));
    EXPECT_EQ(trials[i].at("status"), want[i].first);
    EXPECT_EQ(trials[i].at("budget"), want[i].second);
    EXPECT_EQ(trials[i].at("history").back().at("step"), want[i].second);
    // trial.json: the rung it was given (which resume replays), and where it ended.
    const auto rung = nlohmann::json::parse(slurp(dir_ + "/stops/trials/" + std::to_string(i) + "/trial.json"))
                          .at("rungs")
                          .back();
    EXPECT_EQ(rung.at("budget"), 980);
    EXPECT_EQ(rung.at("reached"), want[i].second);
    EXPECT_EQ(rung.at("steps"), want[i].second);
  }
  // Where and why it diverged (a loss past the bound of 10, or no number).
  EXPECT_TRUE(std::regex_search(trials[2].at("divergence").get<std::string>(),
                                std::regex("^at step 196, its (training loss [0-9.e+]+ passed early_stopping.divergence 10"
                                           "|(training|validation) loss was (NaN|infinite))$")))
      << trials[2];
  EXPECT_FALSE(trials[0].contains("divergence"));
  // The CSV's error column says it too.
  EXPECT_NE(run("export " + dir_ + "/stops --format csv").out.find(",\"at step 196, its "), std::string::npos);
  // The CSV says the same.
  const Result csv = run("export " + dir_ + "/stops --format csv");
  EXPECT_NE(csv.out.find("\n2,diverged,196.0,,"), std::string::npos) << csv.out;
  // Resumed from its files, the sweep finds the stopped best trial's final
  // model in the rung it stopped in, and evaluates it on the test split again.
  const auto whole = results(dir_ + "/stops");
  ASSERT_TRUE(whole.at("best").contains("test"));
  std::remove((dir_ + "/stops/results.json").c_str());
  ASSERT_EQ(run("resume " + dir_ + "/stops").code, 0);
  EXPECT_EQ(results(dir_ + "/stops"), whole);
}

// A model that does not fit even alone fails its trials saying what ran out,
// how much the model needs, and what to change (std::bad_alloc alone said none
// of it); the sweep still ends, with no best trial and exit 1 (every trial failed).
TEST_F(Cli, AModelPastTheMemoryFailsItsTrialsSayingWhatToChange) {
  if (hfta::test::kAddressSanitizer) GTEST_SKIP() << "ASan's shadow memory needs more address space than any ulimit -v";
  std::string text = kTinySweep;
  text.replace(text.find("depth: 1, width: 32"), 19, "depth: 4, width: 65536");
  text.replace(text.find("method: hyperband, eta: 3"), 25, "method: random, trials: 2");
  const std::string sweep = write_sweep("huge.yaml", text), out = dir_ + "/run.out";
  const std::string dir = dir_ + "/huge";
  // (Threads and malloc arenas pinned: each reserves address space, by the core count.)
  ASSERT_EQ(shell("ulimit -v 6000000; OMP_NUM_THREADS=2 MALLOC_ARENA_MAX=2 " + std::string(HFTA_TUNE_BINARY) + " run " +
                  sweep + " --out " + dir + " --workers 1 >" + out + " 2>&1"),
            1)
      << slurp(out);
  EXPECT_NE(slurp(out).find("hfta-tune run: every trial failed (trial 0: out of memory on cpu with the model alone (a "
                            "host allocation was refused)"),
            std::string::npos)
      << slurp(out);
  const auto r = results(dir);
  ASSERT_EQ(r.at("trials").size(), 2u) << slurp(out);
  for (const auto& t : r.at("trials")) {
    EXPECT_EQ(t.at("status"), "failed");
    const std::string error = t.at("error");
    EXPECT_NE(error.find("out of memory on cpu with the model alone ("), std::string::npos) << error;
    EXPECT_TRUE(std::regex_search(error, std::regex(": it is estimated at [0-9]+ MiB, and arrays are planned within "
                                                    "[0-9]+ MiB; make it smaller: its task options or batch_size$")))
        << error;
  }
  EXPECT_TRUE(r.at("best").is_null());
  EXPECT_NE(slurp(out).find("will likely fail out of memory"), std::string::npos) << slurp(out);
}

}  // namespace
