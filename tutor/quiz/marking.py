"""Marking typed answers: one set of rules for bank questions and generated problems, in the
line quiz and the TUI alike.

* :class:`Verdict`: what a check says (valid? correct? why, what was expected, a hint).
* :func:`parse_number` reads a number as students type it; :func:`number_hint` says what to
  type instead when it cannot; :func:`within` is the one tolerance rule.
* :func:`squash` is the normal form short text answers are compared in.
* :func:`check_answer` marks an answer to a bank :class:`~tutor.quiz.bank.Question`;
  :meth:`tutor.quiz.generators.Part.check` marks a part of a generated problem with the same
  helpers.
* :data:`LETTERS` label multiple-choice options (``a)`` … ``e)``).

Accepted input: mcq ``2``, ``b``, ``B``, ``(b)`` or the choice's text; true/false
``t/f/true/false/yes/no/y/n``; numbers as decimals (``0.47``, ``-1e-3``, ``−0.5``) or fractions
(``3/4``), within the stated tolerance; text compared after :func:`squash` (case, spaces,
brackets, ``√`` vs ``sqrt`` and a leading article do not matter). Pure Python (standard
library only).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.quiz.bank import Question

LETTERS = "abcde"
"""Labels of multiple-choice options, in order."""


@dataclass(frozen=True)
class Verdict:
    """The result of marking one answer.

    ``valid`` False: the text cannot be an answer; show ``hint`` and ask again.
    ``correct``: True/False, or None for a self-graded ``free`` question.
    ``reason``: one line to show after marking. ``expected``: the correct/model answer.
    ``why_wrong``: for a wrong multiple-choice pick, one line saying why that choice is wrong
    (``"Why not b: ..."``), to show with the reason.
    """

    valid: bool
    correct: bool | None
    reason: str
    hint: str | None = None
    expected: str = ""
    why_wrong: str | None = None

    @classmethod
    def invalid(cls, hint: str) -> Verdict:
        return cls(valid=False, correct=None, reason="not an answer", hint=hint)


# --------------------------------------------------------------------------- numbers

_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$")
_GROUPED = re.compile(r"^[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$")
"""Digits in groups of three (``25,600,000``); the first group has no leading zero, so
``0,500`` stays a decimal-comma slip that :func:`number_hint` explains."""


def fmt(x: float) -> str:
    """A number in marking messages and tolerances: up to ten significant digits."""
    return f"{x:.10g}"


def parse_number(text: str) -> float | None:
    """A plain decimal (``0.47``, ``-1.2e-3``, ``.5``), a fraction (``3/4``, ``-1/8``) or a
    whole number in digit groups (``470,400``)."""
    s = unify(text).replace(" ", "")
    if not s:
        return None
    if _GROUPED.match(s):
        s = s.replace(",", "")
    if s.count("/") == 1:
        top, bottom = s.split("/")
        if _NUMBER.match(top) and _NUMBER.match(bottom):
            try:
                value = Fraction(top) / Fraction(bottom)
            except (ValueError, ZeroDivisionError):
                return None
            return float(value)
        return None
    if _NUMBER.match(s):
        value = float(s)
        return value if math.isfinite(value) else None
    return None


def number_hint(text: str) -> str:
    """What to type instead of ``text``, which :func:`parse_number` could not read."""
    if re.search(r"\d,\d", text) and parse_number(text.replace(",", ".")) is not None:
        return "Use a decimal point, not a comma: 0.5, not 0,5."
    if re.search(r"[,;]", text):
        return "Type a single number, not a list."
    return "Type a number: a decimal like 0.25 or a fraction like 3/4."


def within(value: float, answer: float, tolerance: float) -> bool:
    """The tolerance rule: ``|value − answer| ≤ tolerance``, plus a hair for rounding."""
    return abs(value - answer) <= tolerance + 1e-9 * max(1.0, abs(answer))


def tolerance_text(tolerance: float, each: bool = False, fmt_num=fmt) -> str:
    """``; anything within ±0.01 counts`` (or ``; give the exact value``) for instructions."""
    if not tolerance:
        return "; give the exact value"
    return f"; anything within ±{fmt_num(tolerance)}{' per entry' if each else ''} counts"


NUMBER_INSTRUCTIONS = "Type a number (a decimal like 0.25 or a fraction like 3/4)"


# --------------------------------------------------------------------------- text

_TRUE = {"t", "true", "y", "yes"}
_FALSE = {"f", "false", "n", "no"}
_DROP = re.compile(r"[\s_(){}\[\]*·×⋅<>⟨⟩]+")


def unify(text: str) -> str:
    """NFKC, lower case, unicode minus/root/dashes to ASCII words."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return (text.replace("−", "-").replace("–", "-").replace("√", "sqrt")
            .replace("’", "'").replace("‘", "'"))


def squash(text: str) -> str:
    """Normal form for comparing short text answers.

    Case, spaces, brackets, underscores, multiplication signs, surrounding quotes and a
    final full stop are ignored, ``√`` reads as ``sqrt``, and a leading article (a/an/the) is
    dropped: ``"1/√d_k"``, ``"1 / sqrt(dk)"`` and ``"1/SQRT(D_K)"`` all become ``"1/sqrtdk"``.
    ``^`` and inner quotes are kept (``Y^_t`` is not ``Y_t``).
    """
    text = unify(text).strip().strip("\"'`").rstrip(".!").strip()
    text = re.sub(r"^(?:a|an|the)\s+", "", text)
    return _DROP.sub("", text)


def _choice_index(text: str, q: Question) -> int | None | str:
    """0-based index, None if unreadable, or "range" if a number/letter outside the choices."""
    s = unify(text).strip().strip("().:;").strip()
    if s.startswith("option "):
        s = s[7:].strip()
    n = len(q.choices)
    target = squash(text)
    by_text = next((i for i, c in enumerate(q.choices) if target and target == squash(c)), None)
    if re.fullmatch(r"\d+", s):
        i = int(s) - 1
        return i if 0 <= i < n else by_text if by_text is not None else "range"
    if re.fullmatch(r"[a-z]", s):
        i = ord(s) - ord("a")
        return i if 0 <= i < n else by_text if by_text is not None else "range"
    return by_text


# --------------------------------------------------------------------------- bank questions


def check_answer(question: Question, text: str) -> Verdict:
    """Mark the student's typed ``text`` against a bank ``question`` (see :class:`Verdict`)."""
    text = "" if text is None else str(text)
    q = question
    expected = q.answer_text
    if not text.strip():
        return Verdict.invalid("Type an answer first. " + q.instructions)

    if q.kind == "free":
        return Verdict(True, None, "Compare your answer with the model answer and grade yourself.",
                       hint=None, expected=expected)

    if q.kind == "mcq":
        n = len(q.choices)
        got = _choice_index(text, q)
        if got == "range":
            return Verdict.invalid(f"Choose {LETTERS[0]}–{LETTERS[n - 1]} (or 1–{n}).")
        if got is None:
            return Verdict.invalid(f"Answer with a letter a–{LETTERS[n - 1]} or a number 1–{n}.")
        ok = got == q.answer
        reason = ("Right: " if ok else f"You chose {LETTERS[got]}; the answer is ") + expected + "."
        why = f"Why not {LETTERS[got]}: {q.why_wrong[got]}" if not ok and q.why_wrong else None
        return Verdict(True, ok, reason, hint=None if ok else q.hint, expected=expected, why_wrong=why)

    if q.kind == "true_false":
        s = unify(text).strip(" .!")
        if s in _TRUE:
            said = True
        elif s in _FALSE:
            said = False
        else:
            return Verdict.invalid("Answer true or false (t/f, yes/no also work).")
        ok = said == q.answer
        reason = f"The statement is {expected}." if ok else f"No: the statement is {expected}."
        return Verdict(True, ok, reason, hint=None if ok else q.hint, expected=expected)

    # fill
    squashed = squash(text)
    texts = ([] if q.is_numeric else [str(q.answer)]) + list(q.accept)
    if any(squashed == squash(t) for t in texts):
        return Verdict(True, True, f"Right: {expected}.", expected=expected)
    if q.is_numeric:
        value = parse_number(text)
        if value is None:
            return Verdict.invalid(number_hint(text))
        if within(value, float(q.answer), q.tolerance or 0.0):
            return Verdict(True, True, f"Right: {expected}.", expected=expected)
        return Verdict(True, False, f"You gave {fmt(value)}; the answer is {expected}.",
                       hint=q.hint, expected=expected)
    return Verdict(True, False, f"The expected answer is {expected}.", hint=q.hint, expected=expected)
