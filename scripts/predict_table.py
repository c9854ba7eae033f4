#!/usr/bin/python3
"""Score new rows with a trial of a sweep on a table of your own (task.dataset csv).

    scripts/predict_table.py runs/wine 9 new_rows.csv > predictions.csv

Builds the trial's MLP in PyTorch (plain_models.mlp, with the options its
sweep.json and trial.json record), loads its trials/<id>/state_dict.pt, and
feeds it the rows as the trial was trained: the columns data/table.json names,
in its order, each standardised by its mean and scale. Prints the rows' CSV
with a `predicted` column: the label of the class with the largest logit, then
each class's probability (`probability_<class>`, the softmax), or for a
regression (task.loss mse, l1 or huber) the number predicted, in the label's
own units. Where the rows carry the label column too, their accuracy, macro
F1, balanced accuracy, ROC AUC and average precision (as scikit-learn computes them; a
regression's RMSE and MAE, over the rows whose label is a number) go to
stderr. The model runs in float32: a sweep trained with precision bf16 or
fp16 evaluated under autocast, so its figures differ from the run's by that
rounding.
"""
import bisect
import csv
import json
import os
import signal
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plain_models  # noqa: E402


def model_of(experiment, trial):
    sweep = json.load(open(os.path.join(experiment, "sweep.json")))
    params = json.load(open(os.path.join(experiment, "trials", str(trial), "trial.json")))["params"]
    table = json.load(open(os.path.join(experiment, "data", "table.json")))
    options = dict(sweep["task"]["options"])
    options.update({k: v for k, v in params.items() if k in ("depth", "width", "activation")})
    net = plain_models.mlp(inputs=len(table["features"]), depth=int(options["depth"]), width=int(options["width"]),
                           activation=options["activation"], classes=len(table.get("classes", [None])))
    net.load_state_dict(torch.load(os.path.join(experiment, "trials", str(trial), "state_dict.pt")))
    return net.eval(), table


def integer(text):
    """The integer a label spells (1, 1.0, 1e3), as hfta-tune reads integer labels, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value == int(value) and abs(value) < 9e15 else None


def number(text):
    """A finite number, as hfta-tune reads them, or None."""
    try:
        value = float(text) if "_" not in text else float("nan")  # (Python reads 1_000; hfta-tune does not)
    except (TypeError, ValueError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def feature(text, column, where):
    """A finite number, as hfta-tune reads its features; else exits naming the file and line."""
    value = number(text)
    if value is None:
        sys.exit(f"{where}: column {column!r} holds {text!r}, not a finite number")
    return value


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    if len(sys.argv) != 4:
        sys.exit("usage: predict_table.py EXPERIMENT_DIR TRIAL ROWS.csv")
    experiment, trial, rows_path = sys.argv[1], sys.argv[2], sys.argv[3]
    if not trial.isdigit():
        sys.exit(f"predict_table.py: TRIAL is a trial's id (a number), not {trial!r}")
    try:
        net, table = model_of(experiment, int(trial))
    except FileNotFoundError as e:
        sys.exit(f"{e.filename}: no such file (is {experiment} an experiment on a table, and {trial} its trial?)")
    try:
        with open(rows_path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                sys.exit(f"{rows_path}: empty; a table starts with a header row naming its columns")
            columns = [c.strip(" \t") for c in header]  # as hfta-tune names them
            rows = [(reader.line_num, r) for r in reader if any(field.strip() for field in r)]
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{rows_path}: cannot be read as UTF-8 CSV text: {e}")
    if not rows:
        sys.exit(f"{rows_path}: holds a header row and no rows to score")
    missing = [c for c in table["features"] if c not in columns]
    if missing:
        sys.exit(f"{rows_path}: no column {missing[0]!r}; the trial reads {', '.join(table['features'])}")
    at = {c: i for i, c in enumerate(columns)}
    for line, r in rows:
        if len(r) != len(columns):
            sys.exit(f"{rows_path}:{line}: the row holds {len(r)} fields; the header names {len(columns)} columns")
    x = torch.tensor([[(feature(r[at[c]], c, f"{rows_path}:{line}") - m) / s
                       for c, m, s in zip(table["features"], table["mean"], table["scale"])] for line, r in rows],
                     dtype=torch.float64).float()  # standardised in double, then float32, as the trial trained
    label = table["label"]
    out = csv.writer(sys.stdout, lineterminator="\n")
    if "target_scale" in table:  # a regression: the output, in the label's units
        with torch.no_grad():
            predicted = (net(x).double().squeeze(1) * table["target_scale"] + table["target_mean"]).tolist()
        out.writerow(columns + ["predicted"])
        for (_, r), p in zip(rows, predicted):
            out.writerow(r + [repr(p)])
        if label in at:
            # Errors in units of target_scale, so that labels near 1e200 do not
            # overflow when squared; a row without a number to compare with
            # (new rows, some labelled) is left out, and counted.
            scale = table["target_scale"]
            known = [(number(r[at[label]]), p) for (_, r), p in zip(rows, predicted)]
            errors = [(y - p) / scale for y, p in known if y is not None]
            skipped = len(known) - len(errors)
            note = f"; {skipped} without a number in {label!r} left out" if skipped else ""
            if errors:
                rmse = (sum(e * e for e in errors) / len(errors)) ** 0.5 * scale
                mae = sum(abs(e) for e in errors) / len(errors) * scale
                print(f"rmse {rmse:.6g} mae {mae:.6g} ({len(errors)} rows{note})", file=sys.stderr)
            else:
                print(f"no row has a number in {label!r} to compare with", file=sys.stderr)
        return
    classes = table["classes"]
    with torch.no_grad():
        probabilities = torch.softmax(net(x).double(), 1)
    predicted = probabilities.argmax(1).tolist()
    out.writerow(columns + ["predicted"] + [f"probability_{c}" for c in classes])
    for (_, r), p, ps in zip(rows, predicted, probabilities.tolist()):
        out.writerow(r + [classes[p]] + [repr(q) for q in ps])
    if label in at and rows:
        integers = all(integer(c) is not None for c in classes)
        def same(written, name):  # integer classes are one class however written (1, 1.0)
            return integer(written) == int(name) if integers else written.strip() == name
        right = sum(same(r[at[label]], classes[p]) for (_, r), p in zip(rows, predicted))
        # The rows whose label is one of the classes: their class-balanced scores.
        known = [(k, i) for i, (_, r) in enumerate(rows) for k, c in enumerate(classes) if same(r[at[label]], c)]
        scores = ""
        if known:
            labels = [k for k, _ in known]
            said = [predicted[i] for _, i in known]
            f1, balanced = class_balanced(labels, said, len(classes))
            ps = [probabilities[i].tolist() for _, i in known]
            auc = roc_auc(labels, ps, len(classes))
            precision = average_precision(labels, ps, len(classes))
            over = f" over the {len(known)} rows whose label is a class," if len(known) < len(rows) else ""
            scores = (f";{over} F1 {f1:.6g}, balanced accuracy {balanced:.6g}, " +
                      (f"AUC {auc:.6g}" if auc is not None else "no AUC (their labels are one class)") +
                      (f", average precision {precision:.6g}" if precision is not None else ""))
        print(f"accuracy {right / len(rows):.6g} ({right} of {len(rows)} rows){scores}", file=sys.stderr)


def class_balanced(labels, predicted, classes):
    """Macro F1 and balanced accuracy, as sklearn's f1_score(average="macro") and balanced_accuracy_score."""
    f1, recall = [], []
    for c in range(classes):
        tp = sum(y == c and p == c for y, p in zip(labels, predicted))
        said, actual = predicted.count(c), labels.count(c)
        if said + actual:
            f1.append(2 * tp / (said + actual))
        if actual:
            recall.append(tp / actual)
    return sum(f1) / len(f1), sum(recall) / len(recall)


def roc_auc(labels, probabilities, classes):
    """ROC AUC, as sklearn's roc_auc_score (one-vs-rest macro with more than two classes,
    over the classes among the labels); None where the labels hold one class."""
    areas = []
    for c in ([1] if classes == 2 else range(classes)):
        positive = [p[c] for y, p in zip(labels, probabilities) if y == c]
        negative = [p[c] for y, p in zip(labels, probabilities) if y != c]
        if positive and negative:
            # Every (positive, negative) pair ordered right counts 1, a tie a half.
            ordered = sorted(negative)
            wins = sum(bisect.bisect_left(ordered, s) + 0.5 * (bisect.bisect_right(ordered, s) - bisect.bisect_left(ordered, s))
                       for s in positive)
            areas.append(wins / (len(positive) * len(negative)))
    return sum(areas) / len(areas) if areas else None


def average_precision(labels, probabilities, classes):
    """Average precision, as sklearn's average_precision_score (the macro average over the
    one-vs-rest columns with more than two classes, of the classes among the labels)."""
    areas = []
    for c in ([1] if classes == 2 else range(classes)):
        ranked = sorted(((p[c], y == c) for y, p in zip(labels, probabilities)), key=lambda pair: -pair[0])
        positives = sum(hit for _, hit in ranked)
        if not positives:
            continue
        area, found, found_before = 0.0, 0, 0
        for place, (score, hit) in enumerate(ranked, 1):
            found += hit
            if place == len(ranked) or ranked[place][0] != score:  # a run of tied scores is one threshold
                area += (found - found_before) * found / place  # the recall it adds, times its precision
                found_before = found
        areas.append(area / positives)
    return sum(areas) / len(areas) if areas else None

if __name__ == "__main__":
    main()
