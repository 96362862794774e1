"""Benchmark: how well and how fast the mistake catalogue diagnoses a number (not a test).

Run: ``python benchmarks/diagnosis.py`` (the full table, a few minutes), ``--problems N``
(drawn problems per computation, default 20), ``--seed S``, ``--timing`` (only the speed
part), ``--quick`` (5 problems).

1. **Quality** — the simulated students of :mod:`engine.mistakes.students`: for every
   catalogued mistake, many drawn problems of every computation it applies to, and every
   value it changes: a student making that mistake (2-4 significant digits, rounded or cut
   off), a right student and a random guesser. Per mistake and in total: recall (the planted
   mistake is named), precision (what is named is the planted one, or gives exactly its
   number), false alarms on random numbers (per mistake: that mistake named; in total: any
   diagnosis), and right answers diagnosed (must be 0). Targets: recall ≥ 90 %, precision
   ≥ 95 %, false alarms ≤ 2 %.
2. **Speed** — one diagnosis of a wrong value on the notes' defaults, for every trace, in a
   fresh process whose kernels run interpreted (as ``attn-tutor trace NAME --check`` runs
   them): median of 5 diagnoses, each with the run cache emptied first (no reuse).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TARGETS = {"recall": 0.90, "precision": 0.95, "false_alarms": 0.02}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def quality(problems: int, seed: int) -> bool:
    from engine.mistakes import MISTAKES, students

    t0 = time.perf_counter()
    per, total = students.run(problems=problems, seed=seed)
    took = time.perf_counter() - t0
    print(f"## Quality: {problems} problems per computation, seed {seed} ({took:.0f} s)\n")
    print(f"{'mistake':32} {'answers':>7} {'recall':>7} {'precision':>9} {'false alarms':>12} "
          f"{'right named':>11}")
    ok = True
    for mid in MISTAKES:
        t = per.get(mid)
        if t is None:
            print(f"{mid:32} {'(applies nowhere)':>7}")
            ok = False
            continue
        bad = (t.planted and t.recall < TARGETS["recall"]) or (t.named and t.precision < TARGETS["precision"]) \
            or (t.random and t.blamed > TARGETS["false_alarms"]) or t.right_named
        ok &= not bad
        print(f"{mid:32} {t.planted:7d} {t.recall:7.1%} {t.precision:9.1%} {t.blamed:12.1%} "
              f"{t.right_named:11d}{'  <- below target' if bad else ''}")
        if t.confused:
            print(f"{'':34}named instead: " + ", ".join(f"{k} ×{n}" for k, n in t.confused.most_common(3)))
    print(f"{'TOTAL':32} {total.planted:7d} {total.recall:7.1%} {total.precision:9.1%} "
          f"{total.false_alarms:12.1%} {total.right_named:11d}")
    print(f"\nrandom answers: {total.random}, given a diagnosis: {total.random_named}; right answers: "
          f"{total.right}, diagnosed: {total.right_named}")
    ok &= (total.recall >= TARGETS["recall"] and total.precision >= TARGETS["precision"]
           and total.false_alarms <= TARGETS["false_alarms"] and total.right_named == 0)
    return ok


_CHILD = r"""
import json, statistics, sys, time
from engine._jit import use_interpreter
assert use_interpreter()
import numpy as np
from engine.mistakes import computations, diagnose, registry, run_with
out = {}
for name in computations():
    comp = registry.computation(name)
    right = run_with(name, None, ())
    # the first value the first mistake changes, typed to 2 decimals: a real diagnosis
    pick = None
    for m in comp.mistakes:
        wrong = run_with(name, None, (m,))
        for k, x in right.items():
            y = wrong.get(k)
            if y is not None and y.shape == x.shape and np.isfinite(y).all() and not np.allclose(x, y):
                pick = (k, np.round(y, 2))
                break
        if pick:
            break
    times = []
    for _ in range(5):
        registry._CACHE.clear()
        t0 = time.perf_counter()
        diagnose(name, None, pick[0], pick[1], decimals=2)
        times.append(time.perf_counter() - t0)
    out[name] = (pick[0], statistics.median(times), len(comp.mistakes), len(comp.pairs))
print(json.dumps(out))
"""


def speed() -> None:
    print(f"\n## Speed: one diagnosis, kernels interpreted (load {_load()})\n")
    res = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    data = json.loads(res.stdout)
    print(f"{'computation':22} {'value':>16} {'mistakes':>8} {'pairs':>5} {'ms':>8}")
    for name, (key, t, m, p) in data.items():
        print(f"{name:22} {key:>16} {m:8d} {p:5d} {1000 * t:8.1f}")
    times = [t for _, t, _, _ in data.values()]
    print(f"\nmedian {1000 * statistics.median(times):.1f} ms, slowest {1000 * max(times):.1f} ms "
          f"({max(data, key=lambda n: data[n][1])}); load after: {_load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timing", action="store_true", help="only the speed part")
    ap.add_argument("--quick", action="store_true", help="5 problems per computation")
    args = ap.parse_args()
    print(f"load average at start: {_load()}\n")
    ok = True
    if not args.timing:
        ok = quality(5 if args.quick else args.problems, args.seed)
    speed()
    if not args.timing:
        print("\nall targets met" if ok else "\nSOME TARGETS MISSED")


if __name__ == "__main__":
    main()
