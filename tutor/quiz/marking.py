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
``t/f/true/false/yes/no/y/n``; numbers as :func:`read_number` reads them (decimals, digit
groups, fractions, roots, powers: ``25,600,000``, ``√64``, ``2^-3``, ``≈0.367``), within the
stated tolerance; text compared after :func:`squash` (case, spaces, brackets, ``√`` vs
``sqrt`` and a leading article do not matter). An answer longer than
:data:`MAX_ANSWER` characters is not marked (a hint says so). Pure Python (standard library
only).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tutor.limits import MAX_ANSWER

if TYPE_CHECKING:
    from tutor.quiz.bank import Question

LETTERS = "abcde"
"""Labels of multiple-choice options, in order."""



def too_long(n: int) -> Verdict:
    """The verdict on an answer of ``n`` characters, more than :data:`MAX_ANSWER`."""
    return Verdict.invalid(f"That answer is {n} characters long; keep it under {MAX_ANSWER}.")


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

_MAX_NUMBER_TEXT = 100
"""A typed number (or the little sum that gives it) longer than this is not read."""
_MAX_DIGITS = 50


def fmt(x: float) -> str:
    """A number in marking messages and tolerances: up to ten significant digits."""
    return f"{x:.10g}"


@dataclass(frozen=True)
class Reading:
    """What :func:`read_number` made of a typed answer: the value, or why not (``hint``)."""

    value: float | None
    hint: str | None = None


_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPER_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_GROUPED = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")
"""Digits in groups of three (``470,400``, ``25,600,000``); the first group has no leading zero."""
_ONE_GROUP = re.compile(r"[+-]?0,\d{3}")
"""``0,367``: a decimal comma, or a digit group after a zero? Asked, never marked."""
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)|(sqrt|exp|ln|pi|π|e)|(\*\*|[-+*×·/^()]))")
_PREFIX = re.compile(r"^(?:≈|~|=|≃|about\s)\s*")
_SPACED_DIGITS = re.compile(r"\d+(?: +\d+)+")
_SPACE_GROUPED = re.compile(r"\d{1,3}(?: \d{3})+")
"""Digits in groups of three with spaces between (``25 600 000``; NFKC makes thin spaces plain)."""


def read_number(text: str) -> Reading:
    """One number as students type it; the one place typed numbers are read (quiz questions,
    generated problems, and anyone else who marks a number, such as exam papers).

    Accepted: decimals (``0.47``, ``-1e-3``, ``.5``, ``−0.5``), digit groups (``25,600,000``,
    ``1,234.5``, ``25 600 000``), fractions (``3/4``), roots (``√64``, ``sqrt(64)``, ``1/√3``), powers
    (``2^-3``, ``2**-3``, ``2⁻³``, ``10^6``), ``e`` and ``exp``/``ln``, products (``3×10^8``),
    a leading ``≈`` or ``~``, and small sums of these. Refused, with a hint and never marked:
    a decimal comma (``0,5``), a digit group after a zero (``0,367``: 0.367, or 367?), a
    list (``1 2`` too), and anything longer than 100 characters.
    """
    raw = (text or "").strip()
    if not raw:
        return Reading(None, "Type a number.")
    if len(raw) > _MAX_NUMBER_TEXT:
        return Reading(None, f"That is {len(raw)} characters; a number here is at most "
                             f"{_MAX_NUMBER_TEXT}. {TYPE_A_NUMBER}")
    s = _SUPER_RUN.sub(lambda m: "^(" + m.group().translate(_SUPER) + ")", raw)
    s = unify(s).replace("⁄", "/").replace("∕", "/").replace("÷", "/")
    s = _PREFIX.sub("", s)
    if any(not _SPACE_GROUPED.fullmatch(run.group()) for run in _SPACED_DIGITS.finditer(s)):
        return Reading(None, "Type a single number, not a list.")  # 1 2 is not 12; 25 600 000 is fine
    s = s.replace(" ", "")
    if "," in s:
        if _GROUPED.fullmatch(s):
            s = s.replace(",", "")
        elif _ONE_GROUP.fullmatch(s):
            whole, frac = s.split(",")
            grouped = int(whole + frac)
            return Reading(None, f"{raw} could be {whole}.{frac} or {grouped}: type it with a "
                                 f"decimal point ({whole}.{frac}) or without the comma ({grouped}).")
        else:
            return Reading(None, _comma_hint(raw))
    if ";" in s:
        return Reading(None, "Type a single number, not a list.")
    try:
        value = _Expression(s).value()
    except _NotANumber as exc:
        return Reading(None, str(exc) or TYPE_A_NUMBER)
    except (ZeroDivisionError, OverflowError, ValueError):
        return Reading(None, "That does not give a finite number. " + TYPE_A_NUMBER)
    if not math.isfinite(value):
        return Reading(None, "That does not give a finite number. " + TYPE_A_NUMBER)
    return Reading(value)


TYPE_A_NUMBER = "Type a number: a decimal like 0.25, a fraction like 3/4, or √3, 2^-3, 1e-3."
"""The end of most :func:`read_number` hints: the forms a number may take."""


def _comma_hint(text: str) -> str:
    pointed = text.replace(",", ".")
    if re.search(r"\d,\d", text) and read_number(pointed).value is not None:
        return f"Use a decimal point, not a comma: {pointed}, not {text}."
    return "Type a single number, not a list."


class _NotANumber(Exception):
    pass


class _Expression:
    """A tiny recursive-descent reader of numbers with + − × / ^, roots, e and brackets
    (never ``eval``): sum := product (± product)*; product := unary ((×|/)? unary)*;
    unary := ± unary | power; power := atom (^ unary)?; atom := number | (sum) | func atom | e | π."""

    _FUNCS = {"sqrt": math.sqrt, "exp": math.exp, "ln": math.log}

    def __init__(self, text: str):
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise _NotANumber
            token = m.group(1) or m.group(2) or m.group(3)
            if m.group(1) and len(re.sub(r"\D", "", token)) > _MAX_DIGITS:
                raise _NotANumber(f"That number has more than {_MAX_DIGITS} digits. {TYPE_A_NUMBER}")
            self.tokens.append("^" if token == "**" else token)
            pos = m.end()
        self.at = 0

    def value(self) -> float:
        if not self.tokens:
            raise _NotANumber
        v = self._sum()
        if self.at != len(self.tokens):
            raise _NotANumber
        return v

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise _NotANumber
        self.at += 1
        return token

    def _sum(self) -> float:
        v = self._product()
        while self._peek() in ("+", "-"):
            v = v + self._product() if self._take() == "+" else v - self._product()
        return v

    def _product(self) -> float:
        v = self._unary()
        while True:
            token = self._peek()
            if token in ("*", "×", "·", "/"):
                self.at += 1
                right = self._unary()
                v = v / right if token == "/" else v * right
            elif token is not None and (token == "(" or token in self._FUNCS or token in ("e", "pi", "π")):
                v *= self._unary()  # 2√3, 2(1+1), 2π: implicit product
            else:
                return v

    def _unary(self) -> float:
        if self._peek() in ("+", "-"):
            return -self._unary() if self._take() == "-" else self._unary()
        return self._power()

    def _power(self) -> float:
        base = self._atom()
        if self._peek() != "^":
            return base
        self.at += 1
        exponent = self._unary()
        if abs(exponent) > 1000:
            raise OverflowError
        return math.pow(base, exponent)

    def _atom(self) -> float:
        token = self._take()
        if token == "(":
            v = self._sum()
            if self._take() != ")":
                raise _NotANumber
            return v
        if token in self._FUNCS:
            return self._FUNCS[token](self._atom() if self._peek() == "(" else self._power())
        if token == "e":
            return math.e
        if token in ("pi", "π"):
            return math.pi
        if token[0].isdigit() or token[0] == ".":
            return float(token)
        raise _NotANumber


def parse_number(text: str) -> float | None:
    """The value of a typed number (see :func:`read_number`), or None when it is not one."""
    return read_number(text).value


_LIST_SPLIT = re.compile(r"[,;\s]+")
_BRACKETS = "[](){}⟨⟩"
_PAIRS = {"[": "]", "(": ")", "⟨": "⟩", "{": "}"}


def read_numbers(text: str) -> list[tuple[str, float | None]]:
    """A typed list of numbers (``[0.5, 2]``, ``0.5; 2``, ``sqrt(2) 1/2``): each token with its
    value, or None for a token that is not a number. One outer pair of brackets goes; a
    token's own brackets stay (``sqrt(4)``), a list's stray ones do not (``[0.5``, ``2]``).
    """
    text = text.strip()
    if len(text) >= 2 and _PAIRS.get(text[0]) == text[-1]:
        text = text[1:-1]
    out = []
    for token in (t for t in _LIST_SPLIT.split(text) if t):
        value = parse_number(token)
        out.append((token, value if value is not None else parse_number(token.strip(_BRACKETS))))
    return out


def number_hint(text: str) -> str:
    """What to type instead of ``text``, which :func:`read_number` could not read."""
    return read_number(text).hint or TYPE_A_NUMBER


def within(value: float, answer: float, tolerance: float) -> bool:
    """The tolerance rule: ``|value − answer| ≤ tolerance``, plus a hair for rounding."""
    return abs(value - answer) <= tolerance + 1e-9 * max(1.0, abs(answer))


def tolerance_text(tolerance: float, each: bool = False, fmt_num=fmt) -> str:
    """``; anything within ±0.01 counts`` (or ``; give the exact value``) for instructions."""
    if not tolerance:
        return "; give the exact value"
    return f"; anything within ±{fmt_num(tolerance)}{' per entry' if each else ''} counts"


NUMBER_INSTRUCTIONS = "Type a number (a decimal like 0.25 or a fraction like 3/4)"
"""How the quiz asks for a number (:func:`read_number` reads much more: √3, 2^-3, 25,600,000)."""


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
        if len(s) > 3:
            return by_text if by_text is not None else "range"
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
    if len(text) > MAX_ANSWER:
        return too_long(len(text))

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
