// Names that Ray Tune, Optuna, W&B sweeps and PyTorch give to what a sweep
// here calls otherwise (Ray Tune's grace_period is budget.min), so that a
// sweep ported from them is refused with the name to write instead.
#pragma once

#include <string>
#include <vector>

namespace hfta::core {

/// Where a name is written: a key of a section ("" for the top level,
/// "search", "metric", ...), a value of an enumerated key ("search.method",
/// "metric.goal", "distribution"), or a parameter's name.
enum class NameKind { kKey, kValue, kParameter };

/// " (Ray Tune's grace_period is budget.min here)", ready to append to a
/// message, or "" where `name` is no other tool's. `where` is the section (keys)
/// or the key (values: its last part, "method" of "search.method"); for
/// parameters, `candidates` are the names a parameter may have, and a hint
/// is given only where one of them is the name meant.
std::string other_tools_name(NameKind kind, const std::string& where, const std::string& name,
                             const std::vector<std::string>& candidates = {});

}  // namespace hfta::core
