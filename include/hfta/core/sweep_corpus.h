// A language model's sweep (transformer_lm, bert) trains on a text corpus
// named by the environment ($HFTA_TEXT_CORPUS, or the fortunes package). Run
// keeps the text it read in the experiment directory, so that resume trains
// on the same characters whatever the environment then says, and a user can
// decode an exported model's tokens: DIR/data/corpus.txt and corpus.json
// (its vocabulary, where it was read from, and its bytes' size and CRC-32).
#pragma once

#include <string>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// Whether `sweep` trains on the text corpus.
bool trains_on_corpus(const SweepConfig& sweep);

/// Reads the corpus `sweep` would train on now and keeps it in DIR/data/
/// (run, before sweep.json): corpus.json first, then corpus.txt; points
/// `sweep` at the copy. Nothing for other sweeps. Throws StorageError.
void keep_corpus(const std::string& dir, SweepConfig& sweep);

/// Points a recorded sweep at DIR/data/corpus.txt: "" where it is there and
/// whole, as corpus.json (and its vocab) says (or the sweep trains on no
/// corpus, or its run, of an earlier version, kept none: run.json has no
/// corpus_kept; it reads the environment's, as then), else why resume cannot
/// go on. `note`: where the environment names another corpus than the kept
/// one's source, a line saying which one the sweep trains on.
std::string read_corpus_from(SweepConfig& sweep, const std::string& dir, std::string* note = nullptr);

}  // namespace hfta::core
