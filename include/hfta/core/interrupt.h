// Ctrl-C and SIGTERM stop a sweep at the next step instead of killing it
// mid-write: the arrays in training save a mid-rung checkpoint and the
// process exits 1, resumable, saying so. A second signal kills at once (the
// default action), for a user who will not wait for the checkpoint.
#pragma once

#include <stdexcept>

namespace hfta::core {

/// Thrown where training notices the signal, after its checkpoint.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

/// Catches SIGINT and SIGTERM from here on (once; later calls do nothing more).
void catch_interrupts();

/// Whether SIGINT or SIGTERM arrived since catch_interrupts().
bool interrupted();

/// The signal's name ("SIGINT" or "SIGTERM"), or "" when none arrived.
const char* interrupt_name();

/// Throws Interrupted when a signal arrived.
void stop_if_interrupted();

}  // namespace hfta::core
