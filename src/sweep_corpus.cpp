#include "hfta/core/sweep_corpus.h"

#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/sweep_tables.h"
#include "hfta/trainers/text_corpus.h"

namespace hfta::core {
namespace {

std::string absolute(const std::string& path) {
  std::error_code ec;
  const auto full = std::filesystem::absolute(path, ec);
  return ec ? path : full.lexically_normal().string();
}

}  // namespace

bool trains_on_corpus(const SweepConfig& sweep) {
  return sweep.task.model == "transformer_lm" || sweep.task.model == "bert";
}

void keep_corpus(const std::string& dir, SweepConfig& sweep) {
  if (!trains_on_corpus(sweep)) return;
  trainers::TextCorpusOptions options;
  const trainers::TextCorpus corpus = trainers::read_text_corpus(options);
  std::error_code ec;
  std::filesystem::create_directory(dir + "/data", ec);
  if (ec) throw StorageError("cannot create " + dir + "/data: " + ec.message());
  nlohmann::json vocab = nlohmann::json::array();
  for (unsigned char c : corpus.vocab) vocab.push_back(static_cast<int>(c));
  const nlohmann::json record = {
      {"format", 1},
      {"source", absolute(options.path)},
      {"tokens", "token i is the byte vocab[i]; bert's mask token is len(vocab)"},
      {"vocab", vocab},
      {"files", {{"corpus.txt", table_digest(corpus.text)}}},
  };
  // corpus.json first: it marks data/ as kept (a run killed before the copy
  // leaves what the next run into the directory takes over), and names the
  // copy's bytes, which resume checks.
  write_atomically(dir + "/data/corpus.json", record.dump(2) + "\n");
  write_atomically(dir + "/data/corpus.txt", corpus.text);
  sweep.task.corpus_file = dir + "/data/corpus.txt";
}

std::string read_corpus_from(SweepConfig& sweep, const std::string& dir, std::string* note) {
  if (!trains_on_corpus(sweep)) return "";
  const std::string record_file = dir + "/data/corpus.json", file = dir + "/data/corpus.txt";
  std::ifstream run_json(dir + "/run.json");
  const auto run = nlohmann::json::parse(run_json, nullptr, /*allow_exceptions=*/false);
  struct stat info {};
  const bool kept = run.is_object() && run.contains("corpus_kept") && run["corpus_kept"] != false;  // (damaged: kept)
  if (!kept && ::stat(record_file.c_str(), &info) != 0 && ::stat(file.c_str(), &info) != 0) {
    return "";  // (a run of a version that kept no corpus: it reads the environment's, as then)
  }
  std::ifstream in(record_file);
  const auto record = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("files") || !record["files"].is_object() ||
      !record.value("vocab", nlohmann::json()).is_array()) {
    return record_file + " is gone or damaged (run wrote it whole: changed from outside); it names the corpus the "
                         "trials train on, so resume cannot check it: put back the one run wrote";
  }
  const std::string source = record.value("source", std::string("the corpus"));
  std::ifstream text_in(file, std::ios::binary);
  if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || !text_in) {
    return file + " is gone: run kept the sweep's corpus there (read from " + source +
           "), and the trials train on it; put it back";
  }
  std::ostringstream text;
  text << text_in.rdbuf();
  if (record["files"].value("corpus.txt", nlohmann::json()) != table_digest(text.str())) {
    return file + " is not the corpus run kept (its size or CRC-32 differs from what data/corpus.json records): "
                  "changed from outside; put back the copy the trials trained on (read from " + source + ")";
  }
  // The vocabulary a user decodes tokens by is the text's bytes (read_text_corpus).
  std::array<bool, 256> seen{};
  for (unsigned char c : text.str()) seen[c] = true;
  nlohmann::json vocab = nlohmann::json::array();
  for (int c = 0; c < 256; ++c) {
    if (seen[static_cast<std::size_t>(c)]) vocab.push_back(c);
  }
  if (record["vocab"] != vocab) {
    return record_file + "'s vocab is not the bytes of data/corpus.txt: changed from outside; put back the one run "
                         "wrote (its vocab: the text's distinct bytes in increasing order)";
  }
  sweep.task.corpus_file = file;
  if (note && absolute(trainers::text_corpus_path()) != source) {
    const char* named = std::getenv("HFTA_TEXT_CORPUS");
    *note = (named && *named ? "HFTA_TEXT_CORPUS names " + std::string(named)
                             : "HFTA_TEXT_CORPUS is not set (the default corpus is " + trainers::text_corpus_path() + ")") +
            ", but this sweep trains on the corpus its run kept in " + file + " (read from " + source + ")";
  }
  return "";
}

}  // namespace hfta::core
