// Expects a sweep to be refused at a path and line, as tests of the loader check it.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "hfta/core/sweep_loader.h"
#include "sweep_text.h"

namespace hfta::test {

/// Loads `yaml` as sweep.yaml and expects rejection with a diagnostic at `path`
/// on the line of `needle`, whose message contains `expected`.
inline void expect_rejected(const std::string& yaml, const std::string& path, const std::string& needle,
                            const std::string& expected) {
  try {
    core::load_sweep_string(yaml, "sweep.yaml");
    FAIL() << "accepted an invalid sweep:\n" << yaml;
  } catch (const core::ConfigError& e) {
    const int line = line_of(yaml, needle);
    ASSERT_GT(line, 0) << "test bug: '" << needle << "' not in the YAML";
    for (const auto& d : e.diagnostics()) {
      if (d.path == path) {
        EXPECT_EQ(d.line, line) << d.str();
        EXPECT_NE(d.message.find(expected), std::string::npos) << d.str();
        EXPECT_EQ(d.file, "sweep.yaml");
        // The printed form carries file, line and path for the user.
        EXPECT_NE(d.str().find("sweep.yaml:" + std::to_string(line) + ":"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos);
        return;
      }
    }
    FAIL() << "no diagnostic at " << path << "; got:\n" << e.what();
  }
}

}  // namespace hfta::test
