"""What a generated problem is, and how a typed answer to one of its parts is marked.

A :class:`Problem` is a small exam-style calculation with fresh numbers: a setup, one or more
:class:`Part` s (each with its own answer and stated tolerance), a short worked solution, and
the ``attn-tutor trace`` command that replays the calculation step by step on the same
numbers (:attr:`Problem.trace_link`: the trace's name and inputs as data). Every answer was
computed by the engine when the problem was made.

Marking uses :mod:`tutor.marking` (numbers, tolerance, hints) and returns its
:class:`~tutor.marking.Verdict`, so a UI treats bank questions and generated problems
alike: ``valid`` False → show ``hint`` and ask again. Each part is marked on its own (a
problem of three parts can be two-thirds right). A numeric part names the ``value`` of the
problem's trace it asks for (``weights``, ``A[2]``, ``J[1,2]``); :func:`~tutor.quiz.generators.generate`
links it to the problem's inputs, and a wrong number is diagnosed there
(:func:`tutor.typed.diagnosed`: the catalogued mistakes that give it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from tutor.inputs import TraceLink
from tutor.limits import MAX_ANSWER, shorten
from tutor.marking import (
    LOG_MEANS,
    NUMBER_INSTRUCTIONS,
    Link,
    Verdict,
    all_within,
    number_hint,
    parse_number,
    read_vector,
    tolerance_text,
    too_long,
    uses_log,
    within,
)
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec
from tutor.typed import diagnosed

PartKind = Literal["number", "vector", "set", "choice"]


def _norm_word(text: str) -> str:
    return " ".join(text.strip().strip("\"'.").casefold().split())


@dataclass(frozen=True)
class Part:
    """One answer the student types.

    ``kind``:
      * ``number``: ``answer`` float, correct within ±``tolerance``;
      * ``vector``: ``answer`` tuple of floats, every entry within ±``tolerance``;
      * ``set``: ``answer`` frozenset of words from ``options``, order and repeats ignored;
      * ``choice``: ``answer`` one of ``options`` (typed as the text or its number 1..n).
    """

    prompt: str
    kind: PartKind
    answer: Any
    tolerance: float = 0.0
    options: tuple[str, ...] = ()
    unit: str = ""
    value: str = ""
    """The value of the problem's trace this numeric part asks for, as the mistake catalogue
    names it (``weights``, a row ``A[2]``, an entry ``J[1,2]``); empty when no computation
    of the catalogue gives the number."""
    link: Link | None = field(default=None, compare=False)
    """Where a wrong number is diagnosed: set by ``generate`` from :attr:`value` and the
    problem's trace inputs, or by a maker whose part lives in another computation."""

    @classmethod
    def vector(cls, prompt: str, values: Iterable[float], tolerance: float = 0.0,
               value: str = "") -> Part:
        """A ``vector`` part whose answer is ``values`` (any sequence or array of numbers)."""
        return cls(prompt, "vector", tuple(float(x) for x in values), tolerance=tolerance,
                   value=value)

    @property
    def answer_text(self) -> str:
        if self.kind == "number":
            text = num(self.answer)
        elif self.kind == "vector":
            text = vec(self.answer)
        elif self.kind == "set":
            text = "{" + ", ".join(o for o in self.options if o in self.answer) + "}"
        else:
            text = str(self.answer)
        if self.kind in ("number", "vector") and self.tolerance:
            text += f" (±{num(self.tolerance)}{' each' if self.kind == 'vector' else ''})"
        return text

    @property
    def instructions(self) -> str:
        tol = tolerance_text(self.tolerance, each=self.kind == "vector", fmt_num=num)
        if self.kind == "number":
            return f"{NUMBER_INSTRUCTIONS}{tol}."
        if self.kind == "vector":
            n = len(self.answer)
            return f"Type {n} numbers separated by commas, in order{tol}."
        if self.kind == "set":
            return ("Type the words separated by commas, in any order (from: "
                    + ", ".join(self.options) + ").")
        listing = "; ".join(f"{i}) {o}" for i, o in enumerate(self.options, 1))
        return f"Type one of: {listing} (the words or the number)."

    def check(self, text: str, diagnose: bool = True) -> Verdict:
        """Mark ``text``; ``valid`` False (with a hint) when it cannot be an answer. A wrong
        number of a linked part comes with its diagnoses (unless ``diagnose`` is False: the
        class server diagnoses later, off its event loop)."""
        text = "" if text is None else str(text)
        expected = self.answer_text
        if not text.strip():
            return Verdict.invalid("Type an answer first. " + self.instructions)
        if len(text) > MAX_ANSWER:
            return too_long(len(text))
        if self.kind == "number":
            value = parse_number(text)
            if value is None:
                return Verdict.invalid(number_hint(text))
            ok = within(value, self.answer, self.tolerance)
            log = "" if ok or not uses_log(text) else f" ({LOG_MEANS}.)"
            return self._diagnosed(_verdict(ok, num(value), expected, log), text, diagnose)
        if self.kind == "vector":
            reading = read_vector(text, len(self.answer))
            if reading.values is None:
                return Verdict.invalid(f"{reading.hint} {self.instructions}")
            ok = all_within(reading.values, self.answer, self.tolerance)
            log = "" if ok or not uses_log(text) else f" ({LOG_MEANS}.)"
            return self._diagnosed(_verdict(ok, vec(reading.values), expected, log), text, diagnose)
        if self.kind == "set":
            words = [_norm_word(w) for w in re.split(r"[,;]+|\s+", text) if _norm_word(w)]
            known = {_norm_word(o): o for o in self.options}
            unknown = [w for w in words if w not in known]
            if unknown or not words:
                return Verdict.invalid(f"{shorten(unknown[0])} is not one of the tokens. "
                                       f"{self.instructions}" if unknown else self.instructions)
            chosen = frozenset(known[w] for w in words)
            shown = "{" + ", ".join(o for o in self.options if o in chosen) + "}"
            return _verdict(chosen == self.answer, shown, expected)
        # choice
        s = _norm_word(text)
        picked = None
        if re.fullmatch(r"\d+", s):
            i = int(s) if len(s) <= 3 else 0
            if not 1 <= i <= len(self.options):
                return Verdict.invalid(f"Choose 1–{len(self.options)}. {self.instructions}")
            picked = self.options[i - 1]
        else:
            picked = next((o for o in self.options if _norm_word(o) == s), None)
        if picked is None:
            return Verdict.invalid(self.instructions)
        return _verdict(picked == self.answer, picked, expected, chose=True)

    def _diagnosed(self, verdict: Verdict, text: str, diagnose: bool) -> Verdict:
        return diagnosed(verdict, text, self.link, self.tolerance) if diagnose else verdict


def _verdict(ok: bool, given: str, expected: str, note: str = "", chose: bool = False) -> Verdict:
    gave = f"you {'chose' if chose else 'gave'} {given}"
    reason = f"Right: {expected}." if ok else f"Not quite: {gave}; the answer is {expected}.{note}"
    return Verdict(True, ok, reason, expected=expected, given=given)


@dataclass(frozen=True)
class Problem:
    """A generated problem; ``question_id`` (``"gen:<family>"``) is what the schedule tracks."""

    family: str
    seed: int
    title: str
    section: str
    exam_topics: tuple[str, ...]
    prompt: str
    parts: tuple[Part, ...]
    solution: tuple[str, ...]
    trace: str
    trace_inputs: dict[str, Any] = field(default_factory=dict, compare=False)
    """The inputs that replay this problem on ``trace``, as values (numbers, arrays, words)."""
    data: dict[str, Any] = field(default_factory=dict, compare=False)
    """The problem's numbers (arrays, scalars, words), for tests and for UIs that draw them."""

    @property
    def question_id(self) -> str:
        return question_id(self.family)

    @property
    def trace_link(self) -> TraceLink:
        """The trace that replays this problem's numbers, with those numbers as inputs."""
        return TraceLink(self.trace, self.trace_inputs)

    @property
    def trace_command(self) -> str:
        """``attn-tutor trace NAME --set A=... ...`` replaying this problem's numbers."""
        return self.trace_link.command


def question_id(family: str) -> str:
    return "gen:" + family
