#!/usr/bin/env bash
# Do hfta-tune's searchers search as well as Optuna's? Runs hfta-tune's
# CMA-ES, Gaussian process, TPE and random search, and Optuna's CmaEsSampler,
# TPESampler and RandomSampler, on benchmark functions over
# [0, 1]^d (sphere, a 1000:1 ellipsoid, Rosenbrock's valley, Rastrigin's
# bumps; optimum 0, off the centre), DIMS dimensions, TRIALS trials, for SEEDS
# seeds. hfta-tune's searchers run as a sweep calls them
# (experiments/searcher_functions.cpp: in waves of CMA-ES's population, each
# proposed whole, then told);
# Optuna's (Debian's python3-optuna 3.1 with python3-cmaes, installed here if
# missing) ask and tell one trial at a time, with their defaults (the same
# population, 4 + 3 ln d; CMA-ES's first trial random). Prints and writes
# experiments/results/searchers-vs-optuna-cpu.md and .json: per function and
# dimension the median over seeds of the best value after a third of the
# trials and after all of them, and the seeds where hfta-tune's CMA-ES ended
# better than Optuna's; and each one's median curve, which
# experiments/plot_searchers.sh draws.
# Usage: experiments/searchers_vs_optuna.sh   (SEEDS="1 ... 10", DIMS="2 6", TRIALS=150; OUT as sweep_bench.sh)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
bench=$build_dir/experiments/searcher_functions
out=$(results_dir)
seeds=${SEEDS:-1 2 3 4 5 6 7 8 9 10}
dims=${DIMS:-2 6}
trials=${TRIALS:-150}
functions="sphere ellipsoid rosenbrock rastrigin"
py=/usr/bin/python3  # Debian's, which the packages install into
if ! "$py" -c 'import optuna, cmaes' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-optuna python3-cmaes > /dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for d in $dims; do
  for f in $functions; do
    for s in cmaes gp tpe tpe-mv random; do
      # shellcheck disable=SC2086
      "$bench" "$s" "$f" "$d" "$trials" $seeds >> "$work/hfta.jsonl"
    done
  done
done

mkdir -p "$out"
"$py" - "$work/hfta.jsonl" "$out" "$trials" "$dims" "$seeds" "$functions" <<'PY'
import datetime, json, math, os, statistics, subprocess, sys, warnings
import optuna
warnings.filterwarnings("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)
hfta_file, out, trials, dims, seeds, functions = sys.argv[1:]
trials = int(trials)
dims = [int(d) for d in dims.split()]
seeds = [int(s) for s in seeds.split()]
functions = functions.split()

def value(f, u):  # as experiments/cmaes_functions.cpp
    d = len(u)
    if f == "sphere":
        return sum((x - 0.7) ** 2 for x in u)
    if f == "ellipsoid":
        return sum(1000.0 ** (i / (d - 1) if d > 1 else 0) * (u[i] - 0.7) ** 2 for i in range(d))
    if f == "rosenbrock":
        return sum(100 * ((u[i + 1] - 0.5) * 4 - ((u[i] - 0.5) * 4) ** 2) ** 2 + (1 - (u[i] - 0.5) * 4) ** 2
                   for i in range(d - 1))
    if f == "rastrigin":
        return sum(((x - 0.7) * 10.24) ** 2 - 10 * math.cos(2 * math.pi * (x - 0.7) * 10.24) + 10 for x in u)
    raise ValueError(f)

def optuna_run(sampler, f, d, seed):
    study = optuna.create_study(sampler=sampler)
    best, curve = math.inf, []
    for _ in range(trials):
        t = study.ask()
        v = value(f, [t.suggest_float(f"x{i}", 0, 1) for i in range(d)])
        study.tell(t, v)
        best = min(best, v)
        curve.append(best)
    return curve

curves = {}
for line in open(hfta_file):
    r = json.loads(line)
    curves.setdefault(("hfta " + r["searcher"], r["function"], r["dims"]), {})[r["seed"]] = r["best"]
samplers = {"optuna cmaes": lambda s: optuna.samplers.CmaEsSampler(seed=s),
            "optuna random": lambda s: optuna.samplers.RandomSampler(seed=s),
            "optuna tpe": lambda s: optuna.samplers.TPESampler(seed=s)}
for d in dims:
    for f in functions:
        for name, make in samplers.items():
            curves[(name, f, d)] = {s: optuna_run(make(s), f, d, s) for s in seeds}

columns = ["hfta cmaes", "optuna cmaes", "hfta gp", "hfta tpe", "hfta tpe-mv", "optuna tpe", "hfta random", "optuna random"]
third = trials // 3
rows, table = [], []
for d in dims:
    for f in functions:
        row = {"function": f, "dims": d}
        for c in columns:
            runs = curves[(c, f, d)]
            row[c] = {"median_at_third": statistics.median(runs[s][third - 1] for s in seeds),
                      "median_at_end": statistics.median(runs[s][-1] for s in seeds)}
        row["hfta_cmaes_better_seeds"] = sum(curves[("hfta cmaes", f, d)][s][-1] < curves[("optuna cmaes", f, d)][s][-1]
                                             for s in seeds)
        row["hfta_tpe_better_seeds"] = sum(curves[("hfta tpe", f, d)][s][-1] < curves[("optuna tpe", f, d)][s][-1]
                                           for s in seeds)
        rows.append(row)
        table.append(f"| {f} | {d} | " + " | ".join(f"{row[c]['median_at_third']:.3g} / {row[c]['median_at_end']:.3g}" for c in columns)
                     + f" | {row['hfta_cmaes_better_seeds']}/{len(seeds)} | {row['hfta_tpe_better_seeds']}/{len(seeds)} |")

commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
header = [f"# hfta-tune's searchers against Optuna's: benchmark functions over [0, 1]^d",
          "",
          f"{datetime.date.today()}, commit {commit}, {cpu}, Optuna {optuna.__version__}; {trials} trials, "
          f"{len(seeds)} seeds (experiments/searchers_vs_optuna.sh). Each cell: the median over seeds of the best value "
          f"(0 is the optimum) after {third} trials / after {trials}; the last columns, the seeds where hfta-tune's "
          "CMA-ES and TPE (in waves) ended below Optuna's (one trial at a time). tpe-mv: search.multivariate.",
          "",
          "| function | d | " + " | ".join(columns) + " | hfta cmaes better | hfta tpe better |",
          "|---|---|" + "---|" * len(columns) + "---|---|"]
text = "\n".join(header + table) + "\n"
print(text)
path = os.path.join(out, "searchers-vs-optuna-cpu.md")
notes = ""
if os.path.exists(path):
    old = open(path).read()
    if "\n## Notes" in old:
        notes = old[old.index("\n## Notes"):]
open(path, "w").write(text + notes)
# Each searcher's median best value after each trial (experiments/plot_searchers.sh draws them).
medians = {f"{f}-{d}": {c: [statistics.median(curves[(c, f, d)][s][t] for s in seeds) for t in range(trials)]
                        for c in columns}
           for d in dims for f in functions}
json.dump({"date": str(datetime.date.today()), "commit": commit, "cpu": cpu, "optuna": optuna.__version__,
           "trials": trials, "seeds": seeds, "rows": rows, "median_curves": medians}, open(os.path.join(out, "searchers-vs-optuna-cpu.json"), "w"), indent=1)
PY
