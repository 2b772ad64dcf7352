#!/usr/bin/env python3
"""Where a kernel's instructions go, from Nsight Compute's source page.

Usage:
  ncu --section SourceCounters --import-source yes --kernel-name regex:NAME \
      --launch-count 1 -o prof BINARY ...
  ncu --import prof.ncu-rep --page source --csv --print-source sass > sass.csv
  tools/gpu/ncu_sass.py sass.csv [--groups N]

Prints the opcodes by executed instructions and by stall samples, then the kernel's code
grouped by how often each instruction ran: the instructions of one loop body run equally
often, so a group is a loop (or the straight code between two branches) and its opcode mix
says what one trip of that loop spends (e.g. a key block of the attention: its mma.sync,
its exponentials, its staging). Counts are warp-level (one per warp that issued it).
"""
import argparse
import collections
import csv
import sys


def load(path):
    rows = list(csv.reader(open(path, newline="")))
    head = next(i for i, r in enumerate(rows) if "Source" in r)
    names = rows[head]

    def col(name):
        return names.index(name) if name in names else None

    src, ex = col("Source"), col("Instructions Executed")
    samples = col("Warp Stall Sampling (All Samples)")
    if src is None or ex is None:
        sys.exit("no Source / Instructions Executed columns: was it --page source --print-source sass?")
    out = []
    for r in rows[head + 1:]:
        if len(r) <= max(src, ex) or not r[src].strip():
            continue
        words = r[src].split()
        op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
        num = lambda i: float(r[i].replace(",", "") or 0) if i is not None and r[i] else 0.0
        out.append((op, int(num(ex)), num(samples)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--groups", type=int, default=6, help="execution-count groups to show")
    ap.add_argument("--ops", type=int, default=20, help="opcodes to show per table")
    a = ap.parse_args()
    ins = load(a.csv)
    executed = collections.Counter()
    sampled = collections.Counter()
    for op, n, s in ins:
        executed[op.split(".")[0]] += n
        sampled[op.split(".")[0]] += s
    total, total_s = sum(executed.values()), sum(sampled.values()) or 1
    print(f"{total} warp instructions executed, {total_s:.0f} stall samples")
    for op, n in executed.most_common(a.ops):
        print(f"  {op:10s} {n:12d} ({100 * n / total:5.1f}%)  samples {100 * sampled[op] / total_s:5.1f}%")
    groups = collections.defaultdict(list)
    for op, n, _ in ins:
        if n:
            groups[n].append(op)
    print("\nby execution count (a loop body's instructions run equally often):")
    for n, ops in sorted(groups.items(), key=lambda g: -g[0] * len(g[1]))[: a.groups]:
        mix = collections.Counter(ops).most_common(12)
        print(f"  {n} times x {len(ops)} instructions ({100 * n * len(ops) / total:4.1f}%): "
              + ", ".join(f"{o} {c}" for o, c in mix))


if __name__ == "__main__":
    main()
