#!/usr/bin/python3
"""Score new rows with a trial of a sweep on a table of your own (task.dataset csv).

    scripts/predict_table.py runs/wine 9 new_rows.csv > predictions.csv

Builds the trial's MLP in PyTorch (plain_models.mlp, with the options its
sweep.json and trial.json record), loads its trials/<id>/state_dict.pt, and
feeds it the rows as the trial was trained: the columns data/table.json names,
in its order, each standardised by its mean and scale. Prints the rows' CSV
with a `predicted` column (the label of the class with the largest logit).
Where the rows carry the label column too, their accuracy goes to stderr.
"""
import csv
import json
import os
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
                           activation=options["activation"], classes=len(table["classes"]))
    net.load_state_dict(torch.load(os.path.join(experiment, "trials", str(trial), "state_dict.pt")))
    return net.eval(), table


def same_class(written, name):
    """Integer labels are one class however written (1 and 1.0), as hfta-tune reads them."""
    written = written.strip()
    try:
        return float(written) == float(name)
    except ValueError:
        return written == name


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: predict_table.py EXPERIMENT_DIR TRIAL ROWS.csv")
    experiment, trial, rows_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    net, table = model_of(experiment, trial)
    with open(rows_path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = reader.fieldnames
    missing = [c for c in table["features"] if c not in columns]
    if missing:
        sys.exit(f"{rows_path}: no column {missing[0]!r}; the trial reads {', '.join(table['features'])}")
    x = torch.tensor([[(float(r[c]) - m) / s for c, m, s in zip(table["features"], table["mean"], table["scale"])]
                      for r in rows])
    with torch.no_grad():
        predicted = net(x).argmax(1).tolist()
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(columns + ["predicted"])
    for r, p in zip(rows, predicted):
        out.writerow([r[c] for c in columns] + [table["classes"][p]])
    label = table["label"]
    if label in columns and rows:
        right = sum(same_class(r[label], table["classes"][p]) for r, p in zip(rows, predicted))
        print(f"accuracy {right / len(rows):.6g} ({right} of {len(rows)} rows)", file=sys.stderr)


if __name__ == "__main__":
    main()
