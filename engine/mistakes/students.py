"""Simulated students, to measure how well :func:`~engine.mistakes.diagnose` names mistakes.

For every computation, every mistake it declares and many drawn problems, three students
answer every value the mistake changes:

* one who makes that mistake and writes the number as people do: 2, 3 or 4 significant
  digits, rounded (four times in five) or cut off (truncated);
* one who is right and writes the right number the same ways;
* one who types a random number in the range of the right one (each entry uniform between
  1.5 × the smallest and 1.5 × the largest entry, 0 included), written the same ways.

Recall: the planted mistake is named. Precision: a named mistake is the planted one, or one
that gives exactly the same number on those inputs. False alarms: a random answer gets a
diagnosis (in total: any; per mistake: that mistake, among the random answers to the values
it changes). A planted answer that equals the right
value at the digits typed is not counted (no one could tell). ``benchmarks/diagnosis.py``
prints the table; ``tests/test_mistakes_harness.py`` runs a small sample.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from engine.mistakes import registry
from engine.mistakes.api import draw_inputs
from engine.mistakes.diagnosis import _near, diagnose

TRUNCATE = 0.2
"""How often a simulated student cuts a number off instead of rounding it."""


def typed(x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """What a student types for the exact numbers ``x``: (values, decimals typed per entry).

    Each entry keeps 2-4 significant digits (whole numbers of five digits or more, such as
    parameter counts, are written in full), rounded or cut off; 0 and ±inf are typed as such.
    """
    flat = np.asarray(x, dtype=np.float64).ravel()
    vals, decs = np.empty(flat.size), np.zeros(flat.size, np.int64)
    for i, v in enumerate(flat):
        if not math.isfinite(v) or v == 0:
            vals[i], decs[i] = v, 0
            continue
        if abs(v) >= 1e4 and v == round(v):
            vals[i], decs[i] = v, 0
            continue
        sig = int(rng.integers(2, 5))
        d = max(0, sig - 1 - int(math.floor(math.log10(abs(v)))))
        if rng.random() < TRUNCATE:
            out = math.trunc(v * 10 ** d + math.copysign(1e-7, v)) / 10 ** d  # 0.445 stays 0.445
        else:
            out = float(f"{v:.{d}f}")
        vals[i], decs[i] = float(f"{out:.{d}f}"), d
    return vals.reshape(np.shape(x)), decs


def random_guess(right: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random number (per entry) in the range of the right value (see the module docstring)."""
    r = np.asarray(right, dtype=np.float64)
    finite = r[np.isfinite(r)]
    lo = 1.5 * min(0.0, float(finite.min())) if finite.size else -1.0
    hi = 1.5 * max(0.0, float(finite.max())) if finite.size else 1.0
    if hi - lo < 1e-6:
        lo, hi = lo - 1.0, hi + 1.0
    return rng.uniform(lo, hi, size=r.shape)


@dataclass
class Tally:
    """Counts for one mistake, or for everything."""

    planted: int = 0          # planted answers that differ from the right one at the digits typed
    recalled: int = 0         # ... in which the planted mistake was named
    named: int = 0            # diagnoses given to planted answers
    named_right: int = 0      # ... that were the planted mistake or one giving its number
    random: int = 0           # random answers (on values this mistake changes)
    random_named: int = 0     # ... given any diagnosis
    random_blamed: int = 0    # ... in which this mistake was named
    right: int = 0            # right answers
    right_named: int = 0      # ... given a diagnosis (must stay 0)
    confused: Counter = field(default_factory=Counter)   # wrongly named ids

    def add(self, other: Tally) -> None:
        for k in ("planted", "recalled", "named", "named_right", "random", "random_named",
                  "random_blamed", "right", "right_named"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.confused.update(other.confused)

    @property
    def recall(self) -> float:
        return self.recalled / self.planted if self.planted else float("nan")

    @property
    def precision(self) -> float:
        return self.named_right / self.named if self.named else float("nan")

    @property
    def false_alarms(self) -> float:
        """Random answers given any diagnosis (the total's figure)."""
        return self.random_named / self.random if self.random else float("nan")

    @property
    def blamed(self) -> float:
        """Random answers in which this mistake was named (a mistake's own figure)."""
        return self.random_blamed / self.random if self.random else float("nan")


def _differs(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=1e-9, equal_nan=True)


def run(names: list[str] | None = None, problems: int = 20, seed: int = 0,
        per_value: int = 1) -> tuple[dict[str, Tally], Tally]:
    """The harness: per mistake and in total (see the module docstring).

    Args:
        names: computations to test (default: all of them).
        problems: drawn problems per computation.
        seed: seeds the problems and the students.
        per_value: students of each kind per (problem, mistake, value).
    """
    rng = np.random.default_rng(seed)
    per: dict[str, Tally] = {}
    total = Tally()
    for name in names or registry.names():
        comp = registry.computation(name)
        for _ in range(problems):
            inputs = draw_inputs(name, rng)
            inp = registry.checked_inputs(name, inputs)
            right, _ = registry.run(name, inp, checked=True)
            runs = {m: registry.run(name, inp, (m,), checked=True)[0] for m in comp.mistakes}
            for m in comp.mistakes:
                tally = per.setdefault(m, Tally())
                for key, x in right.items():
                    wrong = runs[m].get(key)
                    if wrong is None or not _differs(wrong, x) or wrong.shape != x.shape \
                            or np.isnan(wrong).any():
                        continue
                    for _ in range(per_value):
                        _student(name, inputs, key, x, wrong, m, runs, rng, tally)
    for t in per.values():
        total.add(t)
    return per, total


def _student(name, inputs, key, right, wrong, planted, runs, rng, tally: Tally) -> None:
    g, d = typed(wrong, rng)
    if not _near(g, right, d).all():
        tally.planted += 1
        check = diagnose(name, inputs, key, g, decimals=d)
        ids = {i for dg in check.diagnoses for i in dg.ids}
        tally.recalled += planted in ids
        for dg in check.diagnoses:
            tally.named += 1
            same = planted in dg.ids or not _differs(np.asarray(dg.value, dtype=np.float64), wrong)
            tally.named_right += same
            if not same:
                tally.confused[" + ".join(dg.ids)] += 1
    g, d = typed(right, rng)
    tally.right += 1
    tally.right_named += bool(diagnose(name, inputs, key, g, decimals=d).diagnoses)
    for _ in range(10):
        guess, d = typed(random_guess(right, rng), rng)
        if not _near(guess, right, d).all():
            break
    else:
        return
    tally.random += 1
    named = {i for dg in diagnose(name, inputs, key, guess, decimals=d).diagnoses for i in dg.ids}
    tally.random_named += bool(named)
    tally.random_blamed += planted in named
