"""Marking an answer to a bank question (``lessons/quiz/*.toml``) with the rules of
:mod:`tutor.marking` (numbers, tolerance, text normal form, verdicts), which the generated
problems and exam papers use too.

Accepted input: mcq ``2``, ``b``, ``B``, ``(b)`` or the choice's text; true/false
``t/f/true/false/yes/no/y/n``; numbers as :func:`tutor.marking.read_number` reads them,
within the stated tolerance; text compared after :func:`tutor.marking.squash`. An answer
longer than :data:`~tutor.limits.MAX_ANSWER` characters is not marked (a hint says so).

A wrong number of an item linked to a computation (:attr:`Question.link`) is diagnosed
(:func:`tutor.typed.diagnosed`), and a wrong choice that is a catalogued mistake
(:attr:`Question.choice_mistakes`) takes its why-wrong line, and its diagnosis, from the
catalogue (:func:`tutor.typed.explain`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tutor.limits import MAX_ANSWER
from tutor.marking import (
    LETTERS,
    LOG_MEANS,
    Verdict,
    number_hint,
    parse_number,
    squash,
    too_long,
    unify,
    uses_log,
    within,
)
from tutor.render.numbers import exact
from tutor.typed import diagnosed, explain

if TYPE_CHECKING:
    from tutor.quiz.bank import Question

_TRUE = {"t", "true", "y", "yes"}
_FALSE = {"f", "false", "n", "no"}


def choice_index(text: str, q: Question) -> int | None | str:
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
        got = choice_index(text, q)
        if isinstance(got, str):  # "range"
            return Verdict.invalid(f"Choose {LETTERS[0]}–{LETTERS[n - 1]} (or 1–{n}).")
        if got is None:
            return Verdict.invalid(f"Answer with a letter a–{LETTERS[n - 1]} or a number 1–{n}.")
        ok = got == q.answer
        reason = ("Right: " if ok else f"You chose {LETTERS[got]}; the answer is ") + expected + "."
        why = f"Why not {LETTERS[got]}: {q.why_wrong[got]}" if not ok and q.why_wrong else None
        mistake = q.choice_mistakes[got] if not ok and q.choice_mistakes else ""
        named = explain(q.link, mistake) if mistake and q.link is not None else None
        if named is not None:  # the choice is a catalogued mistake: the catalogue says why
            why = (f"Why not {LETTERS[got]}: {named.title}. On the worked example "
                   f"({named.replay}): {named.explanation}")
        return Verdict(True, ok, reason, hint=None if ok else q.hint, expected=expected,
                       why_wrong=why, diagnoses=(named,) if named else ())

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
        log = f" ({LOG_MEANS}.)" if uses_log(text) else ""
        wrong = Verdict(True, False, f"You gave {exact(value)}; the answer is {expected}.{log}",
                        hint=q.hint, expected=expected, given=exact(value))
        return diagnosed(wrong, text, q.link, q.tolerance)
    return Verdict(True, False, f"The expected answer is {expected}.", hint=q.hint, expected=expected)
