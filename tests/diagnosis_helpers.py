"""Helpers for the diagnosis wiring tests: how a student types a number, and planting a
catalogued mistake's number on a linked value.

The planted number comes from :func:`engine.mistakes.value_of` with the mistake built in
(the engine running the mistake, as the standards ask); what the tests check is the marking
path from a typed answer to the named mistake, not the catalogue's arithmetic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator

import numpy as np

from engine import mistakes
from tutor.marking import Link, Verdict


def student(x: float, digits: int = 3) -> str:
    """``x`` as a student types it: a whole number as it is, else ``digits`` significant
    digits (never an exponent)."""
    x = float(x)
    if abs(x - round(x)) < 1e-9:
        return str(round(x))
    places = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{places}f}"


def typed(values, digits: int = 3) -> str:
    """A value (scalar, vector) typed as a comma-separated list of student numbers."""
    return ", ".join(student(v, digits) for v in np.ravel(values))


def decimals(token: str) -> int:
    return len(token.split(".")[1]) if "." in token else 0


def base_name(value: str) -> str:
    """``A[3]`` → ``A`` (the name :func:`engine.mistakes.mistakes_for` takes)."""
    return re.sub(r"\[.*\]$", "", value)


def right_value(link: Link) -> np.ndarray:
    return mistakes.value_of(link.computation, link.inputs, link.value)


def planted(link: Link, tolerance: float, answer=None) -> Iterator[tuple[str, str, np.ndarray]]:
    """``(mistake id, what the student types, the mistake's value)`` for each catalogued
    mistake of the linked value whose typed number the marking can tell from the right one:
    a number outside the tolerance of the answer (``answer``: the question's stated answer,
    default the right value), and not the right value at the digits typed (that is
    "imprecise", not a mistake)."""
    right = right_value(link)
    stated = right if answer is None else np.asarray(answer, dtype=float)
    for m in mistakes.mistakes_for(link.computation, base_name(link.value)):
        try:
            wrong = mistakes.value_of(link.computation, link.inputs, link.value, (m.id,))
        except ValueError:
            continue
        if wrong.shape != right.shape or not np.all(np.isfinite(wrong)):
            continue
        text = typed(wrong)
        tokens = [t.strip() for t in text.split(",")]
        vals = np.array([float(t) for t in tokens])
        if np.all(np.abs(vals - np.ravel(stated)) <= tolerance + 1e-9):
            continue  # inside the stated tolerance: the question marks it right
        half = np.array([0.5 * 10.0 ** -decimals(t) for t in tokens])
        if np.all(np.abs(vals - np.ravel(right)) <= half + 1e-9):
            continue  # the right value at the digits typed
        yield m.id, text, wrong


def names(verdict: Verdict) -> set[str]:
    """Every mistake id a verdict names (pairs split)."""
    return {i for n in verdict.diagnoses for i in n.ids}


def first_named(link: Link, tolerance: float, check: Callable[[str], Verdict],
                answer=None) -> tuple[str, str, Verdict] | None:
    """Plant the first mistake :func:`planted` offers; ``(id, typed, verdict)``, or None when
    no catalogued mistake can show on this value."""
    for mistake, text, _ in planted(link, tolerance, answer):
        return mistake, text, check(text)
    return None
