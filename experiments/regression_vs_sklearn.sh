#!/usr/bin/env bash
# Is a tuned regression any good? Runs configs/regression.yaml (an MLP on the
# diabetes data, task.loss mse, Hyperband with TPE) at sweep seeds 1 to 4 and
# sets each best trial's test RMSE and R2 (on the 89 rows no search decision
# saw) beside scikit-learn's usual baselines fitted on the same 353 training
# rows: predicting the training mean, least squares, ridge with its alpha
# chosen by cross-validation (RidgeCV), gradient boosting, and an MLPRegressor
# at its defaults on standardised inputs. Prints a Markdown table and writes
# it with the machine and commit to experiments/results/regression-vs-sklearn-cpu.md.
# Needs Debian's python3-sklearn. Usage: experiments/regression_vs_sklearn.sh
source "$(dirname "$0")/tuned_at_seeds.sh"
tuned_at_seeds regression_vs_sklearn configs/regression.yaml diabetes_train.csv diabetes_test.csv
mkdir -p "$out"
/usr/bin/python3 - "$work" "$out" <<'PY'
import csv, json, os, platform, subprocess, sys, warnings
warnings.filterwarnings("ignore")  # MLPRegressor's ConvergenceWarning
import numpy as np
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import LinearRegression, RidgeCV
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

work, out = sys.argv[1:]
def table(name):
    rows = list(csv.reader(open(os.path.join(work, "data", name))))
    data = np.array(rows[1:], dtype=float)
    return data[:, :-1], data[:, -1]
x, y = table("diabetes_train.csv")
tx, ty = table("diabetes_test.csv")
def scores(predicted):
    e = predicted - ty
    return float(np.sqrt(np.mean(e * e))), float(1 - np.sum(e * e) / np.sum((ty - ty.mean()) ** 2))

lines = ["| model | test RMSE | test R2 | note |", "|---|---|---|---|"]
hfta = []
for seed in (1, 2, 3, 4):
    results = json.load(open(os.path.join(work, f"run-{seed}", "results.json")))
    test = results["best"]["test"]
    seconds = float(open(os.path.join(work, f"run-{seed}.seconds")).read())
    hfta.append((test["rmse"], test["r2"]))
    lines.append(f"| hfta-tune, configs/regression.yaml, seed {seed} | {test['rmse']:.2f} | {test['r2']:.3f} | "
                 f"best of {len(results['trials'])} trials (trial {results['best']['id']}), whole run {seconds:.1f} s |")
mean = np.mean(hfta, axis=0)
lines.append(f"| hfta-tune, mean of seeds 1-4 | {mean[0]:.2f} | {mean[1]:.3f} | |")
baselines = [
    ("the training mean", None, "predicts one number"),
    ("LinearRegression", LinearRegression(), "least squares"),
    ("RidgeCV", make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13))), "alpha by cross-validation"),
    ("GradientBoostingRegressor", GradientBoostingRegressor(random_state=0), "defaults"),
    ("MLPRegressor", make_pipeline(StandardScaler(), MLPRegressor(max_iter=2000, random_state=0)),
     "100 hidden units, Adam, up to 2000 epochs, standardised inputs"),
]
for name, model, note in baselines:
    predicted = np.full_like(ty, y.mean()) if model is None else model.fit(x, y).predict(tx)
    rmse, r2 = scores(predicted)
    lines.append(f"| scikit-learn {name} | {rmse:.2f} | {r2:.3f} | {note} |")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
import sklearn
header = (f"# Regression: hfta-tune's tuned MLP against scikit-learn baselines\n\n"
          f"Diabetes data (configs/data/diabetes_*.csv): 353 rows to tune on (hfta-tune holds 71 of them out for "
          f"validation and trains on the other 282; the baselines fit all 353), 89 to test on. Commit {commit}, {cpu}, {os.cpu_count()} cores, scikit-learn {sklearn.__version__}. "
          f"Written by experiments/regression_vs_sklearn.sh.\n\n")
text = header + "\n".join(lines) + "\n"
print(text)
open(os.path.join(out, "regression-vs-sklearn-cpu.md"), "w").write(text)
PY
