"""What the benchmark scripts read from an experiment directory (imported by them)."""
import json


def first_rung(directory, ids):
    """The mean first-rung metric of trials `ids` of the sweep in `directory` (failed and diverged ones have none)."""
    values = []
    for i in ids:
        t = json.load(open(f"{directory}/trials/{i}/trial.json"))
        if t["rungs"] and t["rungs"][0].get("metric") is not None:
            values.append(t["rungs"][0]["metric"])
    return sum(values) / len(values)
