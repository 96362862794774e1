"""Marking typed answers: the one set of rules every wing uses — bank questions and generated
problems in the quiz, numeric parts of exam papers, in the line front ends and the TUI alike.

* :func:`read_number` reads a number as students type it (:func:`parse_number`: just the
  value; :func:`number_hint`: what to type instead); :func:`read_vector` reads a list of them.
* :func:`within` is the one tolerance rule (:func:`all_within` for a vector answer);
  :func:`tolerance_text` says it in instructions.
* :func:`unify` and :func:`squash` are the normal forms short text answers are compared in.
* :data:`COMMAND_WORDS` (``:hint``, ``:skip``, ``:quit``) are what a student may type instead
  of an answer at any prompt; :func:`command_word` recognises them.
* :class:`Verdict` is what marking one answer says; :class:`AnswerError` is raised where a
  caller wants an exception instead (exam papers).
* :class:`Link` says where a number the student types is computed (a computation of the
  mistake catalogue, its inputs and the value); :class:`Named` is one catalogued mistake that
  gives the student's number, as :func:`tutor.typed.diagnose` (the one door to the catalogue)
  fills it in a verdict's ``diagnoses``.

Numbers accepted: decimals (``0.47``, ``-1e-3``, ``.5``, ``−0.5``), digit groups
(``25,600,000``, ``25 600 000``), fractions (``3/4``), roots (``√64``, ``sqrt(64)``), powers
(``2^-3``, ``2**-3``, ``2⁻³``), ``e`` and ``π``, the functions of :data:`FUNCTIONS`
(``exp``, ``ln``, ``log`` — the natural log, as in the notes and PyTorch; ``log10`` and
``log2`` for the other bases —, ``tanh``, ``sin``, ``cos``, ``tan``), products, a leading
``≈`` or ``~``, and small sums of these. An answer longer than :data:`~tutor.limits.MAX_ANSWER`
characters is not marked. Pure Python (standard library only).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tutor.limits import MAX_ANSWER, MAX_DIGITS, shorten
from tutor.render.numbers import exact

LETTERS = "abcde"
"""Labels of multiple-choice options, in order (``a)`` … ``e)``)."""


class AnswerError(ValueError):
    """The text cannot be an answer here (the message says what to type); nothing is marked."""


@dataclass(frozen=True)
class Link:
    """Where the number a student types is computed: value ``value`` of the mistake
    catalogue's computation ``computation`` (a trace, or an extra such as ``sequence-loss``)
    on ``inputs`` (None: the notes' defaults). ``value`` may pick a row (``A[2]``) or one
    entry (``J[1,2]``), counting from 1."""

    computation: str
    value: str
    inputs: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Named:
    """One catalogued mistake (or a pair, ids joined by ``+``) whose number is what the
    student typed: what it is, the number it gives, why, and where to read and practise."""

    id: str
    title: str
    value: str
    """The number the mistake gives here, formatted."""
    explanation: str
    lesson: str
    """The lesson id that teaches the right way (``scoring``)."""
    heading: str
    """The heading of that lesson's paragraph (``Formal statement``)."""
    replay: str
    """``attn-tutor trace …`` working the right way through, on the problem's numbers when
    the computation is a trace."""
    practice: str
    """``attn-tutor trace … --practice``: the student does the steps."""
    follow_up: str = ""
    """When several mistakes give the same number: a trace command on inputs where they
    differ (empty otherwise)."""

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.id.split("+"))

    @property
    def read(self) -> str:
        """``attn-tutor lesson scoring`` (the command that opens the lesson)."""
        return f"attn-tutor lesson {self.lesson}"


@dataclass(frozen=True)
class Verdict:
    """The result of marking one answer.

    ``valid`` False: the text cannot be an answer; show ``hint`` and ask again.
    ``correct``: True/False, or None for a self-graded ``free`` question.
    ``reason``: one line to show after marking. ``expected``: the correct/model answer.
    ``why_wrong``: for a wrong multiple-choice pick, one line saying why that choice is wrong
    (``"Why not b: ..."``), to show with the reason. ``given``: the student's answer as the
    marker read it (``0.5`` for ``1/2``), empty when not read. ``diagnoses``: the catalogued
    mistakes that give the student's wrong number (:func:`tutor.typed.diagnosed` attaches
    them; empty for a right answer, a word answer, or a number no mistake explains).
    """

    valid: bool
    correct: bool | None
    reason: str
    hint: str | None = None
    expected: str = ""
    why_wrong: str | None = None
    given: str = ""
    diagnoses: tuple[Named, ...] = ()

    @classmethod
    def invalid(cls, hint: str) -> Verdict:
        return cls(valid=False, correct=None, reason="not an answer", hint=hint)


def too_long(n: int) -> Verdict:
    """The verdict on an answer of ``n`` characters, more than :data:`~tutor.limits.MAX_ANSWER`."""
    return Verdict.invalid(f"That answer is {n} characters long; keep it under {MAX_ANSWER}.")


# --------------------------------------------------------------------------- command words

COMMAND_WORDS: dict[str, str] = {":hint": "hint", ":h": "hint", "?": "hint",
                                 ":skip": "skip", ":s": "skip", ":quit": "quit", ":q": "quit"}
"""What a student may type instead of an answer, at any prompt of any front end."""
COMMANDS_HELP = "Type :hint for a hint, :skip to skip a question, :quit to stop."


def command_word(text: str) -> str | None:
    """``"hint"``, ``"skip"`` or ``"quit"`` when ``text`` is one of :data:`COMMAND_WORDS`."""
    return COMMAND_WORDS.get(text.strip().lower())


def hint_line(hint: str | None) -> str:
    """What ``:hint`` shows."""
    return f"Hint: {hint}" if hint else "No hint for this one."


# --------------------------------------------------------------------------- numbers

_MAX_NUMBER_TEXT = 100
"""A typed number (or the little sum that gives it) longer than this is not read."""

FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sqrt": math.sqrt, "exp": math.exp, "ln": math.log, "log": math.log,
    "log10": math.log10, "log2": math.log2, "tanh": math.tanh,
    "sin": math.sin, "cos": math.cos, "tan": math.tan,
}
"""The functions a typed number may use. ``log`` is the natural log (as ``ln``): the notes'
cross-entropy ``−log P`` and PyTorch's ``log`` both mean it; ``log10``/``log2`` name a base."""

LOG_MEANS = "log is read as ln (the natural log, as in the notes); type log10(…) for base 10"

TYPE_A_NUMBER = ("Type a number: a decimal like 0.25, a fraction like 3/4, or √3, 2^-3, 1e-3, "
                 "tanh(0.5), ln(2) (log means ln too).")
"""The end of most :func:`read_number` hints: the forms a number may take."""

NUMBER_INSTRUCTIONS = "Type a number (a decimal like 0.25 or a fraction like 3/4)"
"""How the quiz asks for a number (:func:`read_number` reads much more: √3, 2^-3, 25,600,000)."""


@dataclass(frozen=True)
class Reading:
    """What :func:`read_number` (or :func:`read_vector`) made of a typed answer: the value, or
    why not (``hint``)."""

    value: float | None
    hint: str | None = None


@dataclass(frozen=True)
class VectorReading:
    """What :func:`read_vector` made of a typed list: the values, or why not (``hint``)."""

    values: tuple[float, ...] | None
    hint: str | None = None


_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPER_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_GROUPED = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")
"""Digits in groups of three (``470,400``, ``25,600,000``); the first group has no leading zero."""
_ONE_GROUP = re.compile(r"[+-]?0,\d{3}")
"""``0,367``: a decimal comma, or a digit group after a zero? Asked, never marked."""
_NAMES = "|".join(sorted(FUNCTIONS, key=len, reverse=True))  # tanh before tan, log10 before log
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)|"
                    rf"({_NAMES}|pi|π|e)|(\*\*|[-+*×·/^()]))")
_PREFIX = re.compile(r"^(?:≈|~|=|≃|about\s)\s*")
_SPACED_DIGITS = re.compile(r"\d+(?: +\d+)+")
_SPACE_GROUPED = re.compile(r"\d{1,3}(?: \d{3})+")
"""Digits in groups of three with spaces between (``25 600 000``; NFKC makes thin spaces plain)."""


def read_number(text: str) -> Reading:
    """One number as students type it: the one place a typed number is read (quiz questions,
    generated problems, exam papers).

    Accepted: see the module docstring. Refused, with a hint and never marked: a decimal
    comma (``0,5``), a digit group after a zero (``0,367``: 0.367, or 367?), a list (``1 2``
    too), a number of more than 50 digits, and anything longer than 100 characters.
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


def _comma_hint(text: str) -> str:
    pointed = text.replace(",", ".")
    if re.search(r"\d,\d", text) and read_number(pointed).value is not None:
        return f"Use a decimal point, not a comma: {pointed}, not {text}."
    return "Type a single number, not a list."


class _NotANumber(Exception):
    pass


class _Expression:
    """A tiny recursive-descent reader of numbers with + − × / ^, functions, e, π and brackets
    (never ``eval``): sum := product (± product)*; product := unary ((×|/)? unary)*;
    unary := ± unary | power; power := atom (^ unary)?; atom := number | (sum) | func atom | e | π."""

    def __init__(self, text: str):
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise _NotANumber
            token = m.group(1) or m.group(2) or m.group(3)
            if m.group(1) and len(re.sub(r"\D", "", token)) > MAX_DIGITS:
                raise _NotANumber(f"That number has more than {MAX_DIGITS} digits. {TYPE_A_NUMBER}")
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
            elif token is not None and (token == "(" or token in FUNCTIONS or token in ("e", "pi", "π")):
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
        if token in FUNCTIONS:
            return FUNCTIONS[token](self._atom() if self._peek() == "(" else self._power())
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


def number_hint(text: str) -> str:
    """What to type instead of ``text``, which :func:`read_number` could not read."""
    return read_number(text).hint or TYPE_A_NUMBER


def uses_log(text: str) -> bool:
    """Whether a typed answer takes a ``log`` without naming its base (read as ``ln``)."""
    return re.search(r"log(?!10|2)", unify(text)) is not None


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


def read_vector(text: str, size: int) -> VectorReading:
    """Exactly ``size`` typed numbers (as :func:`read_numbers` splits them), or a hint that
    says which token is not a number or how many were typed (the caller adds its own
    instructions)."""
    read = read_numbers(text)
    bad = next((t for t, v in read if v is None), None)
    if bad is not None:
        return VectorReading(None, f"{shorten(bad)} is not a number.")
    if len(read) != size:
        return VectorReading(None, f"That is {len(read)} number{'s' * (len(read) != 1)}; this "
                                   f"answer has {size}.")
    return VectorReading(tuple(float(v) for _, v in read if v is not None))


# --------------------------------------------------------------------------- tolerance

def within(value: float, answer: float, tolerance: float) -> bool:
    """The tolerance rule: ``|value − answer| ≤ tolerance``, plus a hair for rounding."""
    return math.isfinite(value) and abs(value - answer) <= tolerance + 1e-9 * max(1.0, abs(answer))


def all_within(value: float | Sequence[float], answer: float | Sequence[float],
               tolerance: float) -> bool:
    """:func:`within` for every entry of a vector answer (or for one number); the lengths must agree."""
    a = tuple(value) if isinstance(value, Sequence) else (value,)
    b = tuple(answer) if isinstance(answer, Sequence) else (answer,)
    return len(a) == len(b) and all(within(x, y, tolerance) for x, y in zip(a, b))


def tolerance_text(tolerance: float, each: bool = False,
                   fmt_num: Callable[[float], str] = exact) -> str:
    """``; anything within ±0.01 counts`` (or ``; give the exact value``) for instructions."""
    if not tolerance:
        return "; give the exact value"
    return f"; anything within ±{fmt_num(tolerance)}{' per entry' if each else ''} counts"


# --------------------------------------------------------------------------- text

def unify(text: str) -> str:
    """NFKC, lower case, unicode minus/root/dashes to ASCII words."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return (text.replace("−", "-").replace("–", "-").replace("√", "sqrt")
            .replace("’", "'").replace("‘", "'"))


_DROP = re.compile(r"[\s_(){}\[\]*·×⋅<>⟨⟩]+")


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
