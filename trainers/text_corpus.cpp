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
    throw std::runtime_error(options.path +
                             ": no such file or directory (install the Debian package fortunes for the default "
                             "corpus, or set HFTA_TEXT_CORPUS to a text file)");
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

ClassificationData load_text_data(const TextCorpusOptions& options) {
  if (options.seq_len < 1) throw std::invalid_argument("seq_len must be at least 1");
  const TextCorpus corpus = read_text_corpus(options);
  const std::int64_t t = options.seq_len;
  const std::int64_t sequences = (static_cast<std::int64_t>(corpus.text.size()) - 1) / t;
  if (sequences < 20) {
    throw std::runtime_error(options.path + ": " + std::to_string(corpus.text.size()) +
                             " characters are too few for 20 sequences of " + std::to_string(t));
  }
  std::array<std::int64_t, 256> token{};
  for (std::size_t i = 0; i < corpus.vocab.size(); ++i) {
    token[static_cast<unsigned char>(corpus.vocab[i])] = static_cast<std::int64_t>(i);
  }
  at::Tensor all = at::empty({static_cast<std::int64_t>(corpus.text.size())}, at::kLong);
  auto* p = all.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < corpus.text.size(); ++i) p[i] = token[static_cast<unsigned char>(corpus.text[i])];
  // Sequence i reads characters [i t, (i + 1) t] : inputs are the first t, labels the last t.
  const at::Tensor inputs = all.narrow(0, 0, sequences * t).view({sequences, t});
  const at::Tensor labels = all.narrow(0, 1, sequences * t).view({sequences, t});
  const at::Tensor which = at::arange(sequences, at::kLong).remainder(20);
  auto pick = [&](const at::Tensor& mask) {
    const at::Tensor rows = mask.nonzero().squeeze(1);
    return Split{inputs.index_select(0, rows), labels.index_select(0, rows)};
  };
  ClassificationData data;
  data.train = pick(which < 18);
  data.validation = pick(which == 18);
  data.test = pick(which == 19);
  data.classes = static_cast<std::int64_t>(corpus.vocab.size());
  return data;
}

}  // namespace hfta::trainers
