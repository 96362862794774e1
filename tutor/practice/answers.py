"""Reading a value the student typed for a blank, and marking it.

Numbers are read by the tutor's reader (:func:`tutor.typed.read_typed`: decimals,
fractions, roots, powers, ``-inf`` for a masked score), one per entry of the blank, separated
by commas, semicolons or spaces. The digits typed after the point say how precisely the
student worked (:func:`tutor.typed.typed_decimals`), and :func:`engine.mistakes.diagnose` marks the value at
that
precision and names the catalogued mistakes that give it. A blank whose value is words (the
hypotheses a beam keeps, a sampled word) is compared word for word; no mistake catalogue
covers words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.trace import fmt
from tutor.marking import number_hint, unify
from tutor.practice.content import Ask
from tutor.typed import EXACT_DECIMALS, read_typed


def is_words(value: Any) -> bool:
    """A value of words (a list of hypotheses, a sampled word), not numbers."""
    if isinstance(value, str):
        return True
    return (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
            and len(value) > 0)


def is_flags(value: Any) -> bool:
    """A value of true/false flags (a row of a mask), typed as 1 and 0."""
    return np.asarray(value).dtype == np.bool_


_FLAGS = {"1": True, "0": False, "t": True, "f": False, "true": True, "false": False}


def shape_of(value: Any) -> tuple[int, ...]:
    return () if isinstance(value, str) else np.shape(value)


def instructions(value: Any) -> str:
    """How to type a value of this shape, and how close counts."""
    if is_words(value):
        if isinstance(value, str):
            return "Type one word."
        if len(value) == 1:
            return "Type the one item (a word, or words for a hypothesis)."
        return f"Type the {len(value)} of them, separated by commas."
    shape = shape_of(value)
    if is_flags(value):
        return f"Type {int(np.prod(shape))} flags, 1 (may attend) or 0 (masked), separated by spaces."
    tail = tolerance_text(value) + "."
    if shape == ():
        return "Type one number" + tail
    if len(shape) == 1:
        return f"Type {shape[0]} numbers separated by commas" + tail
    return (f"Type {shape[0]} rows of {shape[1]} numbers, commas between numbers and ';' "
            "between rows" + tail)


@dataclass(frozen=True)
class Reading:
    """A typed value: ``values`` (float64, shaped like the blank) and per-entry decimals,
    or ``hint`` saying why the text is not such a value."""

    values: np.ndarray | None = None
    decimals: tuple[int | None, ...] = ()
    words: tuple[str, ...] = ()
    hint: str | None = None


def read_value(text: str, expected: Any) -> Reading:
    """Read ``text`` as a value shaped like ``expected`` (one-line hint if it is not one)."""
    text = (text or "").strip()
    if not text:
        return Reading(hint="type an answer first. " + instructions(expected))
    if is_words(expected):
        want = 1 if isinstance(expected, str) else len(expected)
        words = tuple(w.strip() for w in re.split(r"[,;]", text) if w.strip())
        if want == 1 and len(words) == 1:
            return Reading(words=words)
        if len(words) != want:
            return Reading(hint=f"that is {len(words)} item{'s' * (len(words) != 1)}; "
                                + _lower(instructions(expected)))
        return Reading(words=words)
    shape = shape_of(expected)
    if is_flags(expected):  # 1 (true) and 0 (false): numbers the catalogue checks exactly
        flags = [t for t in re.split(r"[,;\s]+", text.lower().strip("[]() ")) if t]
        if any(f not in _FLAGS for f in flags) or len(flags) != int(np.prod(shape)):
            return Reading(hint=_lower(instructions(expected)))
        return Reading(values=np.array([float(_FLAGS[f]) for f in flags]).reshape(shape),
                       decimals=(None,) * len(flags))
    rows = [r for r in text.split(";")] if len(shape) == 2 else [text]
    if len(shape) == 2 and len(rows) != shape[0]:
        return Reading(hint=f"that is {len(rows)} row{'s' * (len(rows) != 1)}; "
                            + _lower(instructions(expected)))
    values: list[float] = []
    decimals: list[int | None] = []
    for row in rows:
        tokens = read_typed(row)
        if len(shape) == 2 and len(tokens) != shape[1]:
            return Reading(hint=f"a row has {len(tokens)} numbers; " + _lower(instructions(expected)))
        for token, value, places in tokens:
            if value is None:
                return Reading(hint=f"{token!r} is not a number. " + number_hint(token))
            values.append(value)
            decimals.append(places)
    size = int(np.prod(shape)) if shape else 1
    if len(values) != size:
        return Reading(hint=f"that is {len(values)} number{'s' * (len(values) != 1)}; "
                            + _lower(instructions(expected)))
    return Reading(values=np.asarray(values, dtype=np.float64).reshape(shape),
                   decimals=tuple(decimals))


def _lower(sentence: str) -> str:
    return sentence[:1].lower() + sentence[1:]


@dataclass(frozen=True)
class Named:
    """One catalogued mistake (or pair) that gives the student's number."""

    ids: tuple[str, ...]
    title: str
    explanation: str
    value: str
    """What that mistake gives here, formatted."""
    lesson: str
    anchor: str


@dataclass(frozen=True)
class Mark:
    """What a typed answer to a blank earned."""

    valid: bool
    hint: str | None = None
    correct: bool = False
    imprecise: bool = False
    given: str = ""
    expected: str = ""
    named: tuple[Named, ...] = ()
    follow_up: Mapping[str, Any] | None = field(default=None)
    diagnosed: bool = True
    """Numbers go through the mistake catalogue; words are only compared."""

    @property
    def diagnosis_ids(self) -> tuple[str, ...]:
        """The mistakes named, a pair as ``a+b``."""
        return tuple("+".join(n.ids) for n in self.named)


def tolerance_for(expected: Any) -> float | None:
    """The stated tolerance of a blank: ±0.005 per unit of its largest entry (at least ±0.005),
    so two correctly rounded decimals count, and so do four decimals worked from the trace's
    rounded intermediates; None for whole numbers (they must be exact)."""
    arr = np.abs(np.asarray(expected, dtype=np.float64))
    finite = arr[np.isfinite(arr)]
    if finite.size == 0 or np.all(finite == np.round(finite)):
        return None
    return float(TOLERANCE * max(finite.max(), 1.0))


TOLERANCE = 0.005
"""Relative size of :func:`tolerance_for`."""


def tolerance_text(expected: Any) -> str:
    """``; within ±0.005 counts`` (or ``; exactly``) for a blank's instructions."""
    tol = tolerance_for(expected)
    return "; exactly" if tol is None else f"; within ±{fmt(tol)} counts"


def mark(trace: str, inputs: Mapping[str, Any] | None, ask: Ask, expected: Any, text: str,
         name: str | None = None) -> Mark:
    """Mark ``text`` typed for ``ask`` of ``trace`` on ``inputs`` (None = the notes' numbers).

    ``expected`` is the ask's right value (its row, for a row); ``name`` the name
    :func:`engine.mistakes.diagnose` knows the whole value by (default: the ask's)."""
    reading = read_value(text, expected)
    if reading.hint is not None:
        return Mark(valid=False, hint=reading.hint)
    if reading.values is None:
        return _mark_words(reading.words, expected)
    check = _diagnose(trace, inputs, ask, name or ask.name, reading, expected)
    named = tuple(Named(d.ids, d.title, d.explanation, fmt(d.value), d.lesson, d.anchor)
                  for d in check.diagnoses)
    return Mark(valid=True, correct=bool(check.correct), imprecise=bool(check.imprecise),
                given=fmt(reading.values), expected=fmt(np.asarray(expected, dtype=float)),
                named=named, follow_up=check.follow_up)


def _diagnose(trace: str, inputs: Mapping[str, Any] | None, ask: Ask, name: str,
              reading: Reading, expected: Any):
    """:func:`engine.mistakes.diagnose` on the typed value: the whole value, or a row
    ``NAME[i]`` by itself."""
    from engine.mistakes import diagnose  # deferred: loads numba (start-up time)

    label = name if ask.index is None else f"{name}[{ask.index}]"
    return diagnose(trace, inputs, label, reading.values, decimals=_decimals(reading.decimals),
                    tolerance=tolerance_for(expected))


def _decimals(per_entry: Sequence[int | None]) -> int | list[int] | None:
    if all(d is None for d in per_entry):
        return None
    return [EXACT_DECIMALS if d is None else d for d in per_entry]


def _word(text: str) -> str:
    """A typed word or hypothesis compared: case, spacing and unicode forms do not matter
    (``The  Cat`` is ``the cat``), articles do (``a dog`` is not ``the dog``)."""
    return " ".join(unify(text).split())


def _mark_words(words: Sequence[str], expected: Any) -> Mark:
    want = [expected] if isinstance(expected, str) else list(expected)
    ok = sorted(_word(w) for w in words) == sorted(_word(w) for w in want)
    return Mark(valid=True, correct=ok, given=", ".join(words), expected=", ".join(want),
                diagnosed=False)
