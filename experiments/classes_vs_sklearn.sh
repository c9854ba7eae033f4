#!/usr/bin/env bash
# Classes of unequal size: is a sweep tuned for ROC AUC any good, and do its
# numbers mean what scikit-learn's mean? Runs configs/breast_cancer.yaml (an
# MLP on the Wisconsin diagnostic data, 37% malignant; Hyperband with TPE over
# lr, width, dropout, weight decay and class_weight none/balanced) at sweep
# seeds 1 to 4, and sets each best trial's test AUC, macro F1, balanced
# accuracy and accuracy (on the 113 rows no search decision saw) beside
# scikit-learn's usual baselines fitted on the same 456 training rows:
# logistic regression, with and without class_weight="balanced", gradient
# boosting and an MLPClassifier. It checks each best trial's test scores
# against sklearn's own functions fed the exported model's probabilities
# (scripts/predict_table.py, PyTorch), and counts how the trials with
# balanced weights fared at the full budget against those without.
# Prints a Markdown table and writes it with the machine and commit to
# experiments/results/classes-vs-sklearn-cpu.md.
# Needs Debian's python3-sklearn. Usage: experiments/classes_vs_sklearn.sh
source "$(dirname "$0")/tuned_at_seeds.sh"
tuned_at_seeds classes_vs_sklearn configs/breast_cancer.yaml breast_cancer_train.csv breast_cancer_test.csv
# Each best trial's exported model scores the test rows in PyTorch.
for seed in 1 2 3 4; do
  best=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["id"])' "$work/run-$seed/results.json")
  /usr/bin/python3 scripts/predict_table.py "$work/run-$seed" "$best" "$work/data/breast_cancer_test.csv" \
    > "$work/predicted-$seed.csv" 2> /dev/null
done
# The cost of ranking: the same Fashion-MNIST random search (the quickstart's
# MLP, 8 trials, 3 epochs: the same training) ranked by val_accuracy and by
# val_auc, which sorts the 10,000 validation images for each of 10 classes,
# for every model at every evaluation. Alternated, twice each.
for run in 1 2; do
  for metric in val_accuracy val_auc; do
    sed -e "s/^  name: val_accuracy/  name: $metric/" -e '/^search:/,/^parameters:/c\search:\n  method: random\n  trials: 8\n\nparameters:' \
        -e 's/^  max: 9$/  max: 3/' configs/quickstart.yaml > "$work/fmnist-$metric.yaml"
    start=$(date +%s.%N)
    "$hfta" run "$work/fmnist-$metric.yaml" --out "$work/fmnist-$metric-$run" > /dev/null
    echo "$(echo "$(date +%s.%N) - $start" | bc)" > "$work/fmnist-$metric-$run.seconds"
  done
done
mkdir -p "$out"
/usr/bin/python3 - "$work" "$out" <<'PY'
import csv, json, os, platform, subprocess, sys, warnings
warnings.filterwarnings("ignore")  # convergence warnings of the baselines
import numpy as np
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, balanced_accuracy_score, f1_score, roc_auc_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

work, out = sys.argv[1:]
def table(name):
    rows = list(csv.reader(open(os.path.join(work, "data", name))))
    return np.array([r[:-1] for r in rows[1:]], dtype=float), np.array([r[-1] == "malignant" for r in rows[1:]], dtype=int)
x, y = table("breast_cancer_train.csv")
tx, ty = table("breast_cancer_test.csv")
def row(name, auc, ap, f1, balanced, accuracy, note):
    return f"| {name} | {auc:.4f} | {ap:.4f} | {f1:.4f} | {balanced:.4f} | {accuracy:.4f} | {note} |"

lines = ["| model | test AUC | test average precision | test F1 (macro) | test balanced accuracy | test accuracy | note |",
         "|---|---|---|---|---|---|---|"]
hfta, checks, weighed = [], [], {"none": [], "balanced": []}
for seed in (1, 2, 3, 4):
    results = json.load(open(os.path.join(work, f"run-{seed}", "results.json")))
    best, test = results["best"], results["best"]["test"]
    seconds = float(open(os.path.join(work, f"run-{seed}.seconds")).read())
    # sklearn's functions on the exported model's probabilities, in PyTorch (float32).
    rows = list(csv.DictReader(open(os.path.join(work, f"predicted-{seed}.csv"))))
    p = np.array([float(r["probability_malignant"]) for r in rows])
    truth = np.array([r["diagnosis"] == "malignant" for r in rows], dtype=int)
    said = (np.array([r["predicted"] for r in rows]) == "malignant").astype(int)
    checks.append(max(abs(roc_auc_score(truth, p) - test["auc"]),
                      abs(f1_score(truth, said, average="macro") - test["f1"]),
                      abs(balanced_accuracy_score(truth, said) - test["balanced_accuracy"])))
    # (The sweep ranks by AUC alone: its average precision is sklearn's, of the exported model.)
    hfta.append((test["auc"], average_precision_score(truth, p), test["f1"], test["balanced_accuracy"], test["accuracy"]))
    lines.append(row(f"hfta-tune, configs/breast_cancer.yaml, seed {seed}", *hfta[-1],
                     f"best of {len(results['trials'])} trials (trial {best['id']}, class_weight "
                     f"{best['params']['class_weight']}), whole run {seconds:.1f} s"))
    full = max(t["budget"] for t in results["trials"])
    for t in results["trials"]:
        if t["budget"] == full and t["status"] in ("completed", "stopped"):
            weighed[t["params"]["class_weight"]].append(t["metric"])
mean = np.mean(hfta, axis=0)
lines.append(row("hfta-tune, mean of seeds 1-4", *mean, ""))
baselines = [
    ("LogisticRegression", LogisticRegression(max_iter=5000), "standardised inputs"),
    ("LogisticRegression, class_weight balanced", LogisticRegression(max_iter=5000, class_weight="balanced"),
     "standardised inputs"),
    ("GradientBoostingClassifier", GradientBoostingClassifier(random_state=0), "defaults"),
    ("MLPClassifier", MLPClassifier(max_iter=2000, random_state=0), "100 hidden units, Adam, standardised inputs"),
]
for name, model, note in baselines:
    fitted = make_pipeline(StandardScaler(), model).fit(x, y)
    p, said = fitted.predict_proba(tx)[:, 1], fitted.predict(tx)
    lines.append(row(f"scikit-learn {name}", roc_auc_score(ty, p), average_precision_score(ty, p),
                     f1_score(ty, said, average="macro"),
                     balanced_accuracy_score(ty, said), accuracy_score(ty, said), note))
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
import sklearn
def cost():
    seconds = {m: [float(open(os.path.join(work, f"fmnist-{m}-{r}.seconds")).read()) for r in (1, 2)]
               for m in ("val_accuracy", "val_auc")}
    runs = {m: json.load(open(os.path.join(work, f"fmnist-{m}-1", "results.json"))) for m in seconds}
    evaluations = sum(len(t["history"]) for t in runs["val_auc"]["trials"])
    same = all(a["history"][-1]["val_loss"] == b["history"][-1]["val_loss"]
               for a, b in zip(runs["val_accuracy"]["trials"], runs["val_auc"]["trials"]))
    acc, auc = min(seconds["val_accuracy"]), min(seconds["val_auc"])
    return (f"The cost of ranking (Fashion-MNIST, the quickstart's MLP, random search of 8 trials to 3 epochs, "
            f"{evaluations} model-evaluations of 10,000 images; whole runs, the faster of two each): ranked by "
            f"val_accuracy {acc:.1f} s, by val_auc {auc:.1f} s ({auc / acc:.2f}x; "
            f"{(auc - acc) / evaluations * 1000:.0f} ms a model-evaluation); the same training: "
            f"{'yes' if same else 'NO'}.\n")
def summary(values):
    return f"{len(values)} trials, mean validation AUC {np.mean(values):.4f}, best {max(values):.4f}" if values else "none"
text = (f"# Classes of unequal size: hfta-tune's MLP tuned for ROC AUC against scikit-learn baselines\n\n"
        f"Breast cancer data (configs/data/breast_cancer_*.csv): 456 rows to tune on (170 malignant; hfta-tune holds "
        f"a fifth out for validation and trains on the rest; the baselines fit all 456), 113 to test on (42 malignant). "
        f"Commit {commit}, {cpu}, {os.cpu_count()} cores, scikit-learn {sklearn.__version__}. "
        f"Written by experiments/classes_vs_sklearn.sh.\n\n" + "\n".join(lines) + "\n\n"
        f"Each best trial's test AUC, F1 and balanced accuracy against scikit-learn's roc_auc_score, f1_score and "
        f"balanced_accuracy_score of its exported model's probabilities in PyTorch: largest difference "
        f"{max(checks):.2e}.\n\n"
        f"Trials at the full budget, seeds 1-4: class_weight none: {summary(weighed['none'])}; "
        f"balanced: {summary(weighed['balanced'])}.\n\n" + cost())
print(text)
open(os.path.join(out, "classes-vs-sklearn-cpu.md"), "w").write(text)
PY
