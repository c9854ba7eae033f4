// Runs hfta-tune's searchers on benchmark functions over [0, 1]^d, as a sweep
// of `trials` trials would call them: in waves of CMA-ES's default population
// (4 + 3 ln d), each proposed whole once the ones before are told (CMA-ES's
// generations; the waves TPE and the Gaussian process propose from; random
// search's draws). For each (function, seed) prints one JSON line: the best
// value found after each trial. experiments/searchers_vs_optuna.sh compares
// them with Optuna's samplers. No LibTorch: only the search side.
// Usage: searcher_functions SEARCHER FUNCTION DIMS TRIALS SEED...
//   SEARCHER: cmaes | gp | tpe | tpe-mv (search.multivariate) | random; FUNCTION: sphere | ellipsoid | rosenbrock | rastrigin
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hfta/search/searcher.h"

namespace {

using hfta::search::Config;

// Each function's optimum (0) is off the centre of the box, at 0.7 (Rosenbrock's at 0.5 + x / 4 = 1: 0.75).
double value(const std::string& f, const std::vector<double>& u) {
  const std::size_t d = u.size();
  double s = 0;
  if (f == "sphere") {
    for (double x : u) s += (x - 0.7) * (x - 0.7);
  } else if (f == "ellipsoid") {
    for (std::size_t i = 0; i < d; ++i) s += std::pow(1000.0, d > 1 ? double(i) / double(d - 1) : 0.0) * std::pow(u[i] - 0.7, 2);
  } else if (f == "rosenbrock") {
    for (std::size_t i = 0; i + 1 < d; ++i) {
      const double x = (u[i] - 0.5) * 4, y = (u[i + 1] - 0.5) * 4;  // [-2, 2]
      s += 100 * std::pow(y - x * x, 2) + std::pow(1 - x, 2);
    }
  } else if (f == "rastrigin") {
    for (double x : u) {
      const double z = (x - 0.7) * 10.24;  // [-7.2, 3.1]
      s += z * z - 10 * std::cos(2 * M_PI * z) + 10;
    }
  } else {
    std::fprintf(stderr, "unknown function %s\n", f.c_str());
    std::exit(2);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s cmaes|gp|tpe|tpe-mv|random FUNCTION DIMS TRIALS SEED...\n", argv[0]);
    return 2;
  }
  const std::string searcher = argv[1], function = argv[2];
  // Said before any output, not after half a JSON line.
  const std::vector<std::string> searchers = {"cmaes", "gp", "tpe", "tpe-mv", "random"};
  if (std::find(searchers.begin(), searchers.end(), searcher) == searchers.end()) {
    std::fprintf(stderr, "unknown searcher %s (cmaes, gp, tpe, tpe-mv or random)\n", searcher.c_str());
    return 2;
  }
  value(function, {0.5});  // (exits 2 naming an unknown function)
  const int dims = std::atoi(argv[3]);
  const std::int64_t trials = std::atoll(argv[4]);
  std::vector<hfta::search::ParameterSpec> params;
  for (int i = 0; i < dims; ++i) {
    hfta::search::ParameterSpec p;
    p.name = "x" + std::to_string(i);
    p.distribution = hfta::search::Distribution::kUniform;
    p.min = 0;
    p.max = 1;
    params.push_back(p);
  }
  const hfta::search::SearchSpace space(params);
  for (int a = 5; a < argc; ++a) {
    const auto seed = static_cast<std::uint64_t>(std::atoll(argv[a]));
    const std::size_t population = hfta::search::CmaEsSearcher::default_population(space);
    std::unique_ptr<hfta::search::Searcher> s;
    if (searcher == "cmaes") {
      s = std::make_unique<hfta::search::CmaEsSearcher>(space, seed, hfta::search::Goal::kMinimize, population);
    } else if (searcher == "gp") {
      s = std::make_unique<hfta::search::GpSearcher>(space, seed, hfta::search::Goal::kMinimize);
    } else if (searcher == "tpe" || searcher == "tpe-mv") {
      s = std::make_unique<hfta::search::TpeSearcher>(space, seed, hfta::search::Goal::kMinimize, searcher == "tpe-mv");
    } else {
      s = std::make_unique<hfta::search::RandomSearcher>(space, seed);
    }
      std::printf("{\"searcher\": \"%s\", \"function\": \"%s\", \"dims\": %d, \"seed\": %llu, \"best\": [", searcher.c_str(),
                function.c_str(), dims, static_cast<unsigned long long>(seed));
    double best = INFINITY;
    for (std::int64_t begin = 0; begin < trials; begin += static_cast<std::int64_t>(population)) {
      std::vector<Config> drawn;
      for (std::int64_t id = begin; id < std::min<std::int64_t>(trials, begin + population); ++id) drawn.push_back(s->suggest(id));
      for (std::size_t k = 0; k < drawn.size(); ++k) {
        std::vector<double> u;
        for (int i = 0; i < dims; ++i) u.push_back(hfta::search::as_double(drawn[k].at("x" + std::to_string(i))));
        const double v = value(function, u);
        best = std::min(best, v);
        const auto id = begin + static_cast<std::int64_t>(k);
        s->observe(id, drawn[k], hfta::search::TrialResult{id, 1.0, v});
        std::printf("%s%.10g", id ? ", " : "", best);
      }
    }
    std::printf("]}\n");
  }
  return 0;
}
