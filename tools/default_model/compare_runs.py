#!/usr/bin/env python3
"""Compares two runs of train_default_model.py made with the same command: how
closely the second reproduces the first's loss curve, tokenizer and weights.

    compare_runs.py RUN_A RUN_B > compare.json

Reads RUN/loss.csv, RUN/summary.json and RUN/model/{tokenizer.json,
model.safetensors}. Prints one JSON object: the largest absolute difference of the
training loss over all logged steps (and where it is), per 100-step band, of the
validation losses where they were measured, and of the weights; whether the
tokenizers and the greedy fixture tokens are identical; both runs' final
perplexities."""
import csv
import hashlib
import json
import os
import sys


def read_rows(run):
    return list(csv.DictReader(open(os.path.join(run, "loss.csv"))))


def column_diffs(rows_a, rows_b, column):
    """[(step, |a - b|)] over the steps where both runs logged `column`."""
    out = []
    for ra, rb in zip(rows_a, rows_b):
        assert ra["step"] == rb["step"], (ra["step"], rb["step"])
        if ra[column] and rb[column]:
            out.append((int(ra["step"]), abs(float(ra[column]) - float(rb[column]))))
    return out


def worst(diffs):
    if not diffs:
        return None
    step, d = max(diffs, key=lambda x: x[1])
    return {"max_abs_diff": d, "at_step": step, "mean_abs_diff": sum(x[1] for x in diffs) / len(diffs),
            "steps_compared": len(diffs)}


def bands(diffs, width=100):
    """The largest difference in each band of `width` steps (steps 1-100, 101-200, ...)."""
    out = {}
    for step, d in diffs:
        key = f"{(step - 1) // width * width + 1}-{((step - 1) // width + 1) * width}"
        out[key] = max(out.get(key, 0.0), d)
    return out


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def weight_diff(path_a, path_b):
    from safetensors.torch import load_file
    a, b = load_file(path_a), load_file(path_b)
    assert a.keys() == b.keys()
    diffs = {k: (a[k].float() - b[k].float()).abs().max().item() for k in a}
    scale = max(a[k].float().abs().max().item() for k in a)
    name = max(diffs, key=diffs.get)
    equal = sum(int((a[k] == b[k]).sum()) for k in a)
    total = sum(a[k].numel() for k in a)
    return {"max_abs_diff": diffs[name], "in_tensor": name, "max_abs_weight": scale,
            "fraction_bitwise_equal": equal / total}


def main():
    run_a, run_b = sys.argv[1], sys.argv[2]
    rows_a, rows_b = read_rows(run_a), read_rows(run_b)
    sum_a = json.load(open(os.path.join(run_a, "summary.json")))
    sum_b = json.load(open(os.path.join(run_b, "summary.json")))
    train = column_diffs(rows_a, rows_b, "train_loss")
    model_a, model_b = os.path.join(run_a, "model"), os.path.join(run_b, "model")
    report = {
        "train_loss": worst(train),
        "train_loss_by_100_steps": bands(train),
        "valid_loss": worst(column_diffs(rows_a, rows_b, "valid_loss")),
        "instruct_valid_loss": worst(column_diffs(rows_a, rows_b, "instruct_valid_loss")),
        "valid_loss_per_eval": column_diffs(rows_a, rows_b, "valid_loss"),
        "tokenizer_identical": sha256(os.path.join(model_a, "tokenizer.json"))
        == sha256(os.path.join(model_b, "tokenizer.json")),
        "kept_step": [sum_a.get("kept_step"), sum_b.get("kept_step")],
        "final_eval": [sum_a["final_eval"], sum_b["final_eval"]],
        "fixture_greedy": [sum_a["fixture_greedy"], sum_b["fixture_greedy"]],
        "train_seconds": [sum_a["train_seconds"], sum_b["train_seconds"]],
        "weights": weight_diff(os.path.join(model_a, "model.safetensors"),
                               os.path.join(model_b, "model.safetensors")),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
