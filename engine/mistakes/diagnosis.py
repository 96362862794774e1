"""Marking a student's number and naming the mistake that produced it.

The matching rule lives here and nowhere else. A number typed with d decimals matches a
candidate x when

* it is x rounded to d decimals: |v − x| ≤ 0.5·10^−d (plus a hair for float error), or
* it is x cut off after d decimals (many students truncate): v lies between 0 and x, less
  than 10^−d from it — for a single number standing for a mistake's value, only when three
  or more significant digits were typed.

A vector or matrix matches when every entry does. ``decimals=None`` means the number is exact
(a fraction or a root, or a float from code): it must equal x to 1e-9.

The order of a diagnosis:

1. **correct** — within the question's tolerance, or (no tolerance) the right value rounded to
   the digits typed with at least two significant digits;
2. **imprecise** — not correct, but the right value at the digits typed (0.5 for 0.4711):
   never diagnosed;
3. the **single mistakes** whose value matches, then (only if none does) the **pairs** the
   computation declares; the best is the one closest to what was typed (in units of the last
   digit typed), then the commoner; every mistake giving that same number is named, with
   ``follow_up`` inputs on which they differ;
4. **unknown** — nothing matches (``diagnoses == ()``).

A number typed with fewer than two significant digits and fewer than two decimals ("1",
"0.5") is too coarse to tell a slip from a guess: it matches a mistake only when the mistake
gives exactly that number, and such an exact match is named even where the right value
rounds to it (1 for q·k = 1 when the scaled score is 0.577). "Correct" without a tolerance
needs two significant digits in the largest entry typed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from engine.mistakes import registry
from engine.mistakes._ops import show
from engine.mistakes.catalogue import MISTAKES, RANK
from engine.traces import draw_inputs as _draw_trace

HAIR = 1e-9
"""Relative allowance for float error in every comparison."""

MIN_SIGNIFICANT = 2
"""Significant digits a typed number needs to be marked correct (no tolerance) or diagnosed."""

CUT_SIGNIFICANT = 3
"""Significant digits a single number needs to be read as a mistake's value cut off (0.478
for 0.4789): reading a two-digit "0.47" as anything from 0.465 to 0.48 would name a mistake
for too many guesses. A vector (every entry must match) is read cut off at any precision,
and so is the right value (a right answer is never diagnosed)."""


@dataclass(frozen=True)
class Diagnosis:
    """One named mistake (or pair) whose number matches what the student typed."""

    ids: tuple[str, ...]
    title: str
    explanation: str
    value: float | np.ndarray
    lesson: str
    anchor: str
    trace: str


@dataclass(frozen=True)
class Check:
    """The verdict on one value (see the module docstring)."""

    trace: str
    name: str
    given: np.ndarray
    expected: np.ndarray
    correct: bool
    imprecise: bool
    diagnoses: tuple[Diagnosis, ...]
    follow_up: dict[str, Any] | None


# --------------------------------------------------------------------------- matching

def _decimals(decimals: int | Sequence[int] | np.ndarray | None, size: int) -> np.ndarray | None:
    """Decimals per entry. A whole number typed among decimals ("0.249, 0, 0") is read at
    the answer's precision (0.000): the student wrote the 0 to the same precision."""
    if decimals is None:
        return None
    d = np.broadcast_to(np.asarray(decimals, dtype=np.int64), (size,)) if np.ndim(decimals) == 0 \
        else np.asarray(decimals, dtype=np.int64).ravel()
    if d.size != size:
        raise ValueError(f"decimals: got {d.size} counts for {size} numbers")
    return np.where(d == 0, d.max(), d)


def _near(g: np.ndarray, x: np.ndarray, dec: np.ndarray | None, cut_from: int = 0) -> np.ndarray:
    """Entry by entry: does typed g stand for x (rounded or cut off at ``dec`` decimals)?

    ``cut_from``: entries count as cut off only when the answer was typed with at least this
    many significant digits in its largest entry (the right value takes any; a mistake needs
    :data:`CUT_SIGNIFICANT`).
    """
    g, x = g.ravel(), x.ravel()
    out = np.zeros(g.size, bool)
    finite = np.isfinite(x)
    out[~finite] = g[~finite] == x[~finite]
    gf, xf = g[finite], x[finite]
    hair = HAIR * np.maximum(1.0, np.abs(xf))
    if dec is None:
        out[finite] = np.abs(gf - xf) <= hair
        return out
    unit = 10.0 ** (-dec[finite].astype(float))
    rounded = np.abs(gf - xf) <= 0.5 * unit + hair
    with np.errstate(invalid="ignore"):
        cut = (np.abs(gf) <= np.abs(xf) + hair) & (np.abs(xf - gf) < unit + hair) & (gf * xf >= 0)
    if cut_from and _largest(g, dec, np.ones(g.size, bool))[0] < cut_from:
        cut[:] = False
    out[finite] = rounded | cut
    return out


def _distance(g: np.ndarray, x: np.ndarray, dec: np.ndarray | None) -> float:
    """How far x is from what was typed, in units of the last digit typed (worst entry)."""
    g, x = g.ravel(), x.ravel()
    finite = np.isfinite(x)
    if not finite.any():
        return 0.0
    unit = 1e-9 if dec is None else 10.0 ** (-dec[finite].astype(float))
    return float(np.max(np.abs(g[finite] - x[finite]) / unit))


def significant(v: np.ndarray, dec: np.ndarray | None) -> np.ndarray:
    """Significant digits of each typed number (an exact number counts as plenty)."""
    v = np.abs(v.ravel())
    if dec is None:
        return np.full(v.size, 99)
    out = np.empty(v.size, np.int64)
    for i, (x, d) in enumerate(zip(v, dec)):
        if not math.isfinite(x):
            out[i] = 99
        elif x == 0:
            out[i] = 0
        elif x >= 1:
            out[i] = len(str(int(x))) + int(d)
        else:
            out[i] = int(d) - (math.ceil(-math.log10(x) - 1e-12) - 1)  # zeros after the point
    return out


def _largest(g: np.ndarray, dec: np.ndarray, among: np.ndarray) -> tuple[int, int]:
    """Significant digits and decimals of the largest finite entry of ``among``: the
    precision an answer was typed with (a vector is typed to one precision, its small
    entries with the same decimals)."""
    flat = g.ravel()
    idx = np.flatnonzero(among & np.isfinite(flat))
    if idx.size == 0:
        return 99, 99
    i = idx[int(np.argmax(np.abs(flat[idx])))]
    return int(significant(flat[i:i + 1], dec[i:i + 1])[0]), int(dec[i])


def _precise_enough(g: np.ndarray, dec: np.ndarray | None, exact: np.ndarray) -> bool:
    """At least two significant digits in the largest entry typed: "0.5" is too coarse for
    0.4711, while [0.85, 0.05, 0.01] is a weight vector typed to two decimals."""
    if dec is None or exact.all():
        return True
    return _largest(g, dec, np.ones(g.size, bool))[0] >= MIN_SIGNIFICANT


def _coarse(g: np.ndarray, dec: np.ndarray | None, exact: np.ndarray) -> np.ndarray:
    """The entries of an answer typed too roughly to stand for rounded numbers ("1", "0.5",
    "1, 0, 0": its largest entry under two significant digits and two decimals) that are not
    exactly the right value: such entries match a mistake only when it gives exactly those
    numbers."""
    if dec is None or exact.all():
        return np.zeros(g.size, bool)
    sig, places = _largest(g, dec, np.ones(g.size, bool))
    return ~exact if sig < MIN_SIGNIFICANT and places < 2 else np.zeros(g.size, bool)


_INDEX = re.compile(r"^(.*\S)\s*\[\s*(\d+)\s*(?:,\s*(\d+)\s*)?\]$")


def split_index(name: str) -> tuple[str, tuple[int, ...]]:
    """``A[2]`` → ("A", (2,)): one row (1-based, as the traces count); ``A[2,3]`` one entry."""
    m = _INDEX.match(name.strip())
    if not m:
        return name, ()
    return m.group(1), tuple(int(g) for g in m.groups()[1:] if g is not None)


def _pick(x: np.ndarray, index: tuple[int, ...], key: str) -> np.ndarray:
    """Row or entry ``index`` (1-based) of value ``x``; ``ValueError`` when there is none."""
    if not index:
        return x
    if len(index) > x.ndim or any(not 1 <= i <= n for i, n in zip(index, x.shape)):
        raise ValueError(f"value {key} has shape {x.shape}; no entry "
                         f"[{', '.join(map(str, index))}] (rows and columns count from 1)")
    return x[tuple(i - 1 for i in index)]


# --------------------------------------------------------------------------- diagnosis

def _explain(ids: tuple[str, ...], facts: dict[str, Any], value: np.ndarray,
             expected: np.ndarray, name: str) -> str:
    fields = {**facts, "value": show(value), "expected": show(expected), "name": name}
    return " ".join(MISTAKES[i].explanation.format_map(fields) for i in ids)


def _as_value(x: np.ndarray) -> float | np.ndarray:
    return float(x) if x.ndim == 0 else np.array(x)  # a copy the caller may keep


def diagnose(trace: str, inputs: Mapping[str, Any] | None, name: str, given: ArrayLike, *,
             decimals: int | Sequence[int] | np.ndarray | None = None,
             tolerance: float | None = None) -> Check:
    """Mark and diagnose the student's value for ``name`` of ``trace`` on ``inputs``.

    Args:
        trace: a trace name (or an extra computation of ``engine.mistakes``).
        inputs: the problem's inputs (None = the notes' defaults).
        name: the value checked, as the trace names it (``Q₂`` may be typed ``Q2``); ``A[2]``
            checks row 2 only, ``A[2,3]`` one entry (counting from 1).
        given: the student's number(s), any shape with the right number of entries.
        decimals: digits typed after the point, per entry or one for all; None = exact.
        tolerance: the question's tolerance for "correct" (absolute, per entry); None =
            correct when it is the right value rounded to the digits typed, with at least
            two significant digits.

    Returns:
        :class:`Check`.

    Raises:
        ValueError: one line, for an unknown trace or value, or a given of the wrong size.
    """
    comp = registry.computation(trace)
    inp = registry.checked_inputs(trace, inputs)
    right, slips = registry.run(trace, inp, (), checked=True)
    base, index = split_index(name)
    key = registry.resolve(base, list(right), trace)
    expected = np.array(_pick(right[key], index, key))  # a copy: the run cache keeps the original
    label = key + (name[len(base):] if index else "")
    g = np.asarray(given, dtype=np.float64)
    if g.size != expected.size:
        raise ValueError(f"value {label}: got {g.size} number{'s' if g.size != 1 else ''}, "
                         f"expected {expected.size}")
    g = g.reshape(expected.shape)
    dec = _decimals(decimals, g.size)
    typed_right = bool(_near(g, expected, dec).all())
    with np.errstate(invalid="ignore"):
        gap = np.abs(g - expected).ravel()  # NaN where both are the same infinity
        size = np.where(np.isfinite(expected), np.abs(expected), 0.0).ravel()
        hair = HAIR * np.maximum(1.0, size)
        exact = (g == expected).ravel() | (gap <= hair)
        if tolerance is not None:
            correct = bool(np.all(exact | (gap <= float(tolerance) + hair)))
        else:
            rounded = exact if dec is None else gap <= 0.5 * 10.0 ** (-dec.astype(float)) + HAIR
            correct = bool(np.all(exact | rounded)) and _precise_enough(g, dec, exact)
    if correct:
        return Check(trace, label, g, expected, True, False, (), None)
    coarse = _coarse(g, dec, exact)
    if typed_right and not coarse.any():
        return Check(trace, label, g, expected, False, True, (), None)
    found = _matches(comp, inp, key, index, g, dec, coarse, [(m,) for m in comp.mistakes])
    if not found:
        found = _matches(comp, inp, key, index, g, dec, coarse, list(comp.pairs))
    if not found:
        return Check(trace, label, g, expected, False, typed_right, (), None)
    found.sort(key=lambda c: (len(c[0]), round(c[2], 6), sum(RANK[i] for i in c[0])))
    best = found[0][1]
    top = [c for c in found if len(c[0]) == len(found[0][0]) and
           np.allclose(c[1], best, rtol=HAIR, atol=HAIR, equal_nan=True)]
    diagnoses = tuple(
        Diagnosis(ids, " + ".join(MISTAKES[i].title for i in ids),
                  _explain(ids, slips.facts, value, expected, key), _as_value(value),
                  MISTAKES[ids[0]].lesson, MISTAKES[ids[0]].anchor, comp.trace)
        for ids, value, _ in top)
    tied = follow_up(trace, inp, label, [d.ids for d in diagnoses]) if len(diagnoses) > 1 else None
    return Check(trace, label, g, expected, False, False, diagnoses, tied)


def _matches(comp, inp, key, index, g, dec, coarse, candidates):
    """The candidates (tuples of ids) whose value of ``key`` (row/entry ``index``) matches g:
    (ids, value, distance). ``coarse`` entries match only an exact value."""
    out = []
    for ids in candidates:
        values, _ = registry.run(comp.name, inp, ids, checked=True)
        x = values.get(key)
        if x is not None and index:
            try:
                x = _pick(x, index, key)
            except ValueError:
                continue
        if x is None or x.shape != g.shape or np.isnan(x).any():
            continue
        ok = np.where(coarse, _near(g, x, None),
                      _near(g, x, dec, CUT_SIGNIFICANT if g.size == 1 else 0))
        if ok.all():
            out.append((tuple(ids), x, _distance(g, x, dec)))
    return out


def follow_up(trace: str, inputs: Mapping[str, Any] | None, name: str,
              ids: Sequence[Sequence[str]], seed: int = 0) -> dict[str, Any] | None:
    """Fresh inputs for ``trace`` on which the mistakes ``ids`` (each a tuple of ids) give
    pairwise different values of ``name``, all different from the right value (two decimals
    apart somewhere), drawn with the trace's own input drawer; None if 200 draws find none.

    ``inputs`` is the problem the tie happened on; it is not reused.
    """
    comp = registry.computation(trace)
    draw = getattr(comp.module, "draw_inputs", None) or (lambda rng: _draw_trace(comp.trace, rng))
    rng = np.random.default_rng(seed)
    groups = [()] + [tuple(i) for i in ids]
    for _ in range(200):
        candidate = draw(rng)
        try:
            inp = registry.checked_inputs(trace, candidate)
            runs = [registry.run(trace, inp, g, checked=True)[0] for g in groups]
            base, index = split_index(name)
            key = registry.resolve(base, list(runs[0]), trace)
        except ValueError:
            continue
        try:
            vals = [None if r.get(key) is None else _pick(r[key], index, key) for r in runs]
        except ValueError:
            continue
        picked = [v for v in vals if v is not None]
        if len(picked) < len(vals) or any(v.shape != picked[0].shape or not np.isfinite(v).all()
                                          for v in picked):
            continue
        rounded = [np.round(v, 2) for v in picked]
        if all(not np.array_equal(rounded[a], rounded[b])
               for a in range(len(picked)) for b in range(a + 1, len(picked))):
            return candidate
    return None
