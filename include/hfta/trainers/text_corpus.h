// A character-level text corpus for the language models: the text read from a
// file or a directory of files, cut into sequences of next-character targets.
// The default corpus is the Debian package `fortunes` (2.56 MB of English
// quotations, jokes and verse under /usr/share/games/fortunes).
#pragma once

#include <cstdint>
#include <string>

#include "hfta/trainers/classification_data.h"

namespace hfta::trainers {

/// $HFTA_TEXT_CORPUS when set, else /usr/share/games/fortunes.
std::string text_corpus_path();

/// "" when `path` is a file or a directory, else what read_text_corpus would
/// throw (naming the package): said before a run writes anything.
std::string text_corpus_missing(const std::string& path = text_corpus_path());

struct TextCorpusOptions {
  std::string path = text_corpus_path();  ///< a file, or a directory whose files are read in name order
  std::int64_t seq_len = 128;             ///< tokens per sequence
  std::int64_t limit = 0;                 ///< > 0: read only the first `limit` characters (tests)
};

/// The corpus's vocabulary: its distinct bytes in increasing order; token i is vocab[i].
struct TextCorpus {
  std::string text;
  std::string vocab;
};

/// Reads the text. In a directory, fortune's index files (.dat) and links
/// (.u8) are skipped, and the "%" lines that separate fortunes become blank lines.
TextCorpus read_text_corpus(const TextCorpusOptions& options = {});

/// "" when the text holds the 20 sequences of seq_len that a split needs (at
/// least one for validation and one for test), else why not; reads it.
std::string text_corpus_too_short(const TextCorpusOptions& options = {});

/// Sequences: inputs [N, seq_len] of tokens (int64) and labels [N, seq_len], each
/// label the token that follows its input. The text is cut into consecutive,
/// non-overlapping sequences; of every 20, the 19th goes to validation and the
/// 20th to test, the rest to training. `classes` is the vocabulary's size.
ClassificationData load_text_data(const TextCorpusOptions& options = {});

/// Sequences for a masked language model: the text in consecutive sequences of
/// seq_len characters, split as load_text_data's. In each, every position is
/// chosen with probability `mask_prob` (at least one per sequence); a chosen
/// token becomes the mask token (id: the vocabulary's size) 80% of the time, a
/// random character 10%, and stays 10% (BERT's recipe). Labels hold the
/// original token at chosen positions and kIgnoreLabel elsewhere. The masks are
/// drawn once from `seed` (static masking, as BERT's original preprocessing),
/// so every model and every run sees the same. `classes` counts the mask token.
ClassificationData load_masked_text_data(const TextCorpusOptions& options, double mask_prob,
                                         std::uint64_t seed = 0);

}  // namespace hfta::trainers
