#!/usr/bin/env python3
"""Draws the default model's loss curve from the training log.

    plot_loss.py LOSS_CSV OUT_PNG
Training loss per step (light), its 50-step running mean, and the validation
losses (natural text, instruction set) where they were measured."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    steps = [int(r["step"]) for r in rows]
    train = [float(r["train_loss"]) for r in rows]
    mean, acc = [], []
    for v in train:
        acc.append(v)
        acc = acc[-50:]
        mean.append(sum(acc) / len(acc))
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(steps, train, color="#9ecae1", linewidth=0.6, label="train (per step)")
    ax.plot(steps, mean, color="#08519c", linewidth=1.4, label="train (50-step mean)")
    for col, color, name in (("valid_loss", "#d94801", "validation: held-out text"),
                             ("instruct_valid_loss", "#238b45", "validation: held-out instructions")):
        pts = [(int(r["step"]), float(r[col])) for r in rows if r[col]]
        if pts:
            ax.plot(*zip(*pts), "o-", color=color, markersize=3, linewidth=1.2, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_ylim(bottom=0, top=min(10.0, max(train) + 0.2))
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("cairn default model: loss")
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
