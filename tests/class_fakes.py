"""A stand-in for ``engine.mistakes`` (and ``engine.traces.draw_inputs``) while the catalogue
is not on this branch: the contract's functions for the ``scores`` trace only, with one
mistake, ``no-scale``, computed independently here with NumPy. :func:`install` puts it in
place only when the real module is missing, so the class tests run against the real
catalogue as soon as it exists."""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class _Mistake:
    id: str
    title: str
    section: int = 8
    lesson: str = "scoring"
    anchor: str = ""
    explanation: str = ""


@dataclass(frozen=True)
class _Diagnosis:
    ids: tuple[str, ...]
    title: str
    explanation: str
    value: Any
    lesson: str = "scoring"
    anchor: str = ""
    trace: str = "scores"


@dataclass(frozen=True)
class _Check:
    trace: str
    name: str
    given: np.ndarray
    expected: np.ndarray
    correct: bool
    imprecise: bool
    diagnoses: tuple
    follow_up: Any = None


MISTAKES = {"no-scale": _Mistake("no-scale", "1/√d_k left out")}


def _inputs(inputs):
    q = np.asarray((inputs or {}).get("Q", [0.5, -0.2]), float)
    K = np.asarray((inputs or {}).get("K", [[0.3, 0.8], [0.9, 0.1], [-0.4, 0.6]]), float)
    return q, K


def run_with(trace, inputs, ids):
    if trace != "scores":
        raise ValueError(f"fake catalogue: no trace {trace!r}")
    q, K = _inputs(inputs)
    dots = np.array([sum(a * b for a, b in zip(q, row)) for row in K])
    scores = dots if "no-scale" in ids else dots / np.sqrt(len(q))
    e = np.exp(scores - scores.max())
    return {"scores": scores, "weights": e / e.sum()}


def checkable(trace, inputs=None):
    return {k: v.shape for k, v in run_with(trace, inputs, ()).items()}


def mistakes_for(trace, name):
    return list(MISTAKES.values())


def _match(given, value, decimals):
    d = np.broadcast_to(np.asarray(12 if decimals is None else decimals), given.shape)
    return bool(np.all(np.abs(given - value) <= 0.5 * 10.0 ** (-d) + 1e-9))


def diagnose(trace, inputs, name, given, *, decimals=None, tolerance=None):
    right = run_with(trace, inputs, ())[name]
    given = np.asarray(given, float).reshape(right.shape)
    ok = (bool(np.all(np.abs(given - right) <= tolerance + 1e-9)) if tolerance is not None
          else _match(given, right, decimals))
    found = ()
    if not ok:
        wrong = run_with(trace, inputs, ("no-scale",))[name]
        if _match(given, wrong, decimals):
            found = (_Diagnosis(("no-scale",), MISTAKES["no-scale"].title,
                                "these are q·k before dividing by √d_k", wrong),)
    return _Check(trace, name, given, right, ok, False, found)


def follow_up(trace, inputs, name, ids, seed=0):
    return None


def draw_inputs(name, rng):
    if name != "scores":
        raise ValueError(f"fake catalogue: no inputs for {name!r}")
    return {"Q": np.round(rng.integers(-10, 11, 2) / 10, 1),
            "K": np.round(rng.integers(-10, 11, (3, 2)) / 10, 1)}


def install() -> None:
    """Put the fake in place of ``engine.mistakes`` / ``draw_inputs`` where they are missing."""
    try:
        importlib.import_module("engine.mistakes")
    except ImportError:
        fake = types.ModuleType("engine.mistakes")
        for name in ("MISTAKES", "run_with", "checkable", "mistakes_for", "diagnose", "follow_up"):
            setattr(fake, name, globals()[name])
        sys.modules["engine.mistakes"] = fake
        import engine

        engine.mistakes = fake  # type: ignore[attr-defined]
    import engine.traces

    if not hasattr(engine.traces, "draw_inputs"):
        engine.traces.draw_inputs = draw_inputs  # type: ignore[attr-defined]
