#include "hfta/core/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace hfta::core {
namespace {

std::atomic<int> received{0};

extern "C" void on_signal(int sig) {
  received = sig;
  static const char note[] = "\nhfta-tune: stopping after a checkpoint (once more to kill at once)\n";
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, note, sizeof note - 1);
}

}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // A write the signal lands in goes on (no half-written file); the next
  // signal gets the default action: killed at once.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() { return received != 0; }

const char* interrupt_name() {
  switch (received.load()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "";
  }
}

void stop_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

}  // namespace hfta::core
