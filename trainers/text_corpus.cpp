#include "hfta/trainers/text_corpus.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace hfta::trainers {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot open");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A fortune file's entries end with a line holding only "%".
std::string without_fortune_separators(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out += (line == "%" ? "" : line) + "\n";
  return out;
}

}  // namespace

std::string text_corpus_path() {
  const char* path = std::getenv("HFTA_TEXT_CORPUS");
  return path && *path ? path : "/usr/share/games/fortunes";
}

std::string text_corpus_missing(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error) || fs::is_regular_file(path, error)) return "";
  return path + ": no such file or directory (install the Debian package fortunes for the default corpus, or set "
                "HFTA_TEXT_CORPUS to a text file)";
}

TextCorpus read_text_corpus(const TextCorpusOptions& options) {
  const fs::path root(options.path);
  std::error_code error;
  TextCorpus corpus;
  if (fs::is_directory(root, error)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && !e.is_symlink() && ext != ".dat" && ext != ".u8") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) corpus.text += without_fortune_separators(slurp(f));
  } else if (fs::is_regular_file(root, error)) {
    corpus.text = slurp(root);
  } else {
    throw std::runtime_error(text_corpus_missing(options.path));
  }
  if (options.limit > 0 && static_cast<std::int64_t>(corpus.text.size()) > options.limit) {
    corpus.text.resize(static_cast<std::size_t>(options.limit));
  }
  std::array<bool, 256> seen{};
  for (unsigned char c : corpus.text) seen[c] = true;
  for (int c = 0; c < 256; ++c) {
    if (seen[static_cast<std::size_t>(c)]) corpus.vocab += static_cast<char>(c);
  }
  return corpus;
}

namespace {

// The corpus as token ids.
at::Tensor tokens_of(const TextCorpus& corpus) {
  std::array<std::int64_t, 256> token{};
  for (std::size_t i = 0; i < corpus.vocab.size(); ++i) {
    token[static_cast<unsigned char>(corpus.vocab[i])] = static_cast<std::int64_t>(i);
  }
  at::Tensor all = at::empty({static_cast<std::int64_t>(corpus.text.size())}, at::kLong);
  auto* p = all.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < corpus.text.size(); ++i) p[i] = token[static_cast<unsigned char>(corpus.text[i])];
  return all;
}

// Why the text cannot be split (fewer than 20 sequences), or "".
std::string too_short(const TextCorpusOptions& options, const TextCorpus& corpus) {
  if (options.seq_len < 1) throw std::invalid_argument("seq_len must be at least 1");
  const std::int64_t sequences = (static_cast<std::int64_t>(corpus.text.size()) - 1) / options.seq_len;
  if (sequences >= 20) return "";
  return options.path + ": " + std::to_string(corpus.text.size()) + " characters are too few for 20 sequences of " +
         std::to_string(options.seq_len) + " (task.options.seq_len)";
}

// How many sequences of `t` (plus the one character a label may read past them) the text holds.
std::int64_t sequence_count(const TextCorpusOptions& options, const TextCorpus& corpus) {
  if (const std::string why = too_short(options, corpus); !why.empty()) throw std::runtime_error(why);
  return (static_cast<std::int64_t>(corpus.text.size()) - 1) / options.seq_len;
}

// Of every 20 sequences the 19th goes to validation and the 20th to test.
ClassificationData split(const at::Tensor& inputs, const at::Tensor& labels, std::int64_t classes) {
  const at::Tensor which = at::arange(inputs.size(0), at::kLong).remainder(20);
  auto pick = [&](const at::Tensor& mask) {
    const at::Tensor rows = mask.nonzero().squeeze(1);
    return Split{inputs.index_select(0, rows), labels.index_select(0, rows)};
  };
  ClassificationData data;
  data.train = pick(which < 18);
  data.validation = pick(which == 18);
  data.test = pick(which == 19);
  data.classes = classes;
  return data;
}

}  // namespace

std::string text_corpus_too_short(const TextCorpusOptions& options) {
  return too_short(options, read_text_corpus(options));
}

ClassificationData load_text_data(const TextCorpusOptions& options) {
  const TextCorpus corpus = read_text_corpus(options);
  const std::int64_t t = options.seq_len, sequences = sequence_count(options, corpus);
  const at::Tensor all = tokens_of(corpus);
  // Sequence i reads characters [i t, (i + 1) t] : inputs are the first t, labels the last t.
  return split(all.narrow(0, 0, sequences * t).view({sequences, t}), all.narrow(0, 1, sequences * t).view({sequences, t}),
               static_cast<std::int64_t>(corpus.vocab.size()));
}

ClassificationData load_masked_text_data(const TextCorpusOptions& options, double mask_prob, std::uint64_t seed) {
  const TextCorpus corpus = read_text_corpus(options);
  const std::int64_t t = options.seq_len, sequences = sequence_count(options, corpus);
  const auto vocab = static_cast<std::int64_t>(corpus.vocab.size());
  const at::Tensor original = tokens_of(corpus).narrow(0, 0, sequences * t).view({sequences, t});
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Tensor chosen = at::rand({sequences, t}, gen, at::kDouble) < mask_prob;
  // At least one position per sequence, so no sequence has an empty loss.
  const at::Tensor forced = at::randint(t, {sequences, 1}, gen, at::kLong);
  chosen.scatter_(1, forced, chosen.gather(1, forced) | (chosen.sum(1, true) == 0));
  const at::Tensor roll = at::rand({sequences, t}, gen, at::kDouble);
  const at::Tensor random_tokens = at::randint(vocab, {sequences, t}, gen, at::kLong);
  at::Tensor inputs = original.clone();
  inputs = at::where(chosen & (roll < 0.8), at::full_like(inputs, vocab), inputs);
  inputs = at::where(chosen & (roll >= 0.8) & (roll < 0.9), random_tokens, inputs);
  const at::Tensor labels = at::where(chosen, original, at::full_like(original, kIgnoreLabel));
  return split(inputs, labels, vocab + 1);
}

}  // namespace hfta::trainers
