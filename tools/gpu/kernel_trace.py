#!/usr/bin/env python3
"""Where a step's time goes, from a kernel trace (tools/gpu/kernel_trace/kernel_trace.cpp).

    CUDA_INJECTION64_PATH=libcairn_kernel_trace.so CAIRN_KERNEL_TRACE=t.csv cairn bench ...
    tools/gpu/kernel_trace.py t.csv [--min-steps 8] [--top 16] [--seams 8] [--by-grid]

The trace is cut into steps at every embedding kernel (a forward pass starts with one); steps
with the same kernels and grids form a group (a batch size and context of the bench). For
each group of at least --min-steps steps it prints the median step (first start to last end)
and, per kernel name, the calls a step and the median time a step the kernel adds to the
timeline: the part of [start, end] after every earlier kernel of the step ended. Kernels that
overlap the one ahead (programmatic dependent launch) add only what they run past it, so the
column sums to the busy part of the step; the rest is idle (gaps between launches).
--by-grid names each kernel with its grid's x (`thin_kernel x128`), which tells apart the
products one kernel serves (a layer's o and gate|up products, say).
"""
import argparse
import collections
import csv
import statistics


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ks = [(r["name"], int(r["start_ns"]), int(r["end_ns"]),
           (int(r["grid_x"]), int(r["grid_y"]), int(r["grid_z"])), r["graph"] == "1")
          for r in rows]
    ks.sort(key=lambda k: k[1])
    return ks


def steps_of(kernels):
    steps, cur = [], []
    for k in kernels:
        if k[0].startswith("embedding") and cur:
            steps.append(cur)
            cur = []
        cur.append(k)
    if cur:
        steps.append(cur)
    return steps


def added_times(step):
    """Per kernel name: ns the kernels of that name add past every earlier kernel's end."""
    added = collections.Counter()
    calls = collections.Counter()
    horizon = step[0][1]
    for name, start, end, _, _ in step:
        added[name] += max(0, end - max(start, horizon))
        horizon = max(horizon, end)
        calls[name] += 1
    return added, calls


def report(group, top):
    spans = [s[-1][2] - s[0][1] for s in group]
    per_name = collections.defaultdict(list)
    calls = collections.Counter()
    busy = []
    for s in group:
        added, c = added_times(s)
        busy.append(sum(added.values()))
        for name in set(added) | set(per_name):
            per_name[name].append(added.get(name, 0))
        calls = c
    span = statistics.median(spans)
    attn = [k for k in group[0] if "split" in k[0] or "fused" in k[0]]
    print(f"{len(group)} steps of {len(group[0])} kernels"
          f" (graph nodes: {sum(k[4] for k in group[0])}; first attention grid"
          f" {attn[0][3] if attn else '-'}): median step {span / 1e3:.1f} us,"
          f" busy {statistics.median(busy) / 1e3:.1f} us,"
          f" idle {(span - statistics.median(busy)) / 1e3:.1f} us")
    rows = sorted(((statistics.median(v), n) for n, v in per_name.items()), reverse=True)
    for ns, name in rows[:top]:
        print(f"    {name:<40} {calls[name]:>5} calls {ns / 1e3:9.1f} us"
              f" {100 * ns / span:5.1f}%  ({ns / max(calls[name], 1) / 1e3:6.2f} us a call)")


def seams(group, top):
    """The idle time of a step by seam: per (kernel ahead, kernel) pair, the median a step of
    the time between the end of every earlier kernel and the kernel's start, summed over the
    pair's places in the step (a copy or a graph launch between two kernels shows up here)."""
    gaps = collections.defaultdict(list)
    for s in group:
        horizon = s[0][2]
        for i, (_, start, end, _, _) in enumerate(s):
            if i:
                gaps[i].append(max(0, start - horizon))
            horizon = max(horizon, end)
    by_pair = collections.Counter()
    places = collections.Counter()
    first = group[0]
    for i, g in gaps.items():
        pair = (first[i - 1][0], first[i][0])
        by_pair[pair] += statistics.median(g)
        places[pair] += 1
    for (ahead, name), ns in by_pair.most_common(top):
        if ns <= 0:
            break
        print(f"    idle before {name:<28} after {ahead:<28} {places[(ahead, name)]:>4} seams"
              f" {ns / 1e3:9.1f} us ({ns / places[(ahead, name)] / 1e3:6.2f} us a seam)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--min-steps", type=int, default=8)
    ap.add_argument("--top", type=int, default=16)
    ap.add_argument("--seams", type=int, default=0,
                    help="also the N seams (kernel ahead, kernel) with the most idle time")
    ap.add_argument("--by-grid", action="store_true",
                    help="name each kernel with its grid's x (the products one kernel serves)")
    a = ap.parse_args()
    kernels = read(a.trace)
    if a.by_grid:
        kernels = [(f"{n} x{g[0]}", s, e, g, gr) for n, s, e, g, gr in kernels]
    groups = collections.OrderedDict()
    for s in steps_of(kernels):
        key = tuple((k[0], k[3]) for k in s)
        groups.setdefault(key, []).append(s)
    for g in groups.values():
        if len(g) >= a.min_steps:
            report(g, a.top)
            if a.seams:
                seams(g, a.seams)


if __name__ == "__main__":
    main()
