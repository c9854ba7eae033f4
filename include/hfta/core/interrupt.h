// Ctrl-C, SIGTERM and SIGHUP stop a sweep at the next step instead of killing it
// mid-write: the arrays in training save a mid-rung checkpoint and the
// process exits 1, resumable, saying so. A second signal kills at once (the
// default action), for a user who will not wait for the checkpoint.
// A time limit (--time-limit) stops a sweep the same way once it passes.
#pragma once

#include <stdexcept>

namespace hfta::core {

/// Thrown where training notices the signal, after its checkpoint.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

/// Catches SIGINT, SIGTERM and SIGHUP from here on (those not ignored when
/// the process began), and ignores SIGPIPE.
void catch_interrupts();

/// Stops the sweep as a signal would once `seconds` have passed from now
/// (0, or more than a century: never, the default).
void stop_after(double seconds);

/// The time limit has passed, whatever the clock says: how the test hooks
/// (injected_faults.h) stop a sweep as a time limit would, at a count.
void time_is_up();

/// Whether SIGINT, SIGTERM or SIGHUP arrived since catch_interrupts().
bool signalled();

/// Whether the time limit passed and no signal came first.
bool time_limit_reached();

/// Whether a signal arrived or the time limit passed.
bool interrupted();

/// The signal's name ("SIGINT", "SIGTERM", "SIGHUP"), "the time limit", or "" when
/// nothing stopped the sweep.
const char* interrupt_name();

/// Throws Interrupted when a signal arrived.
void stop_if_interrupted();

}  // namespace hfta::core
