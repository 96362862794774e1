"""How precisely a student typed a number, for the diagnosis of wrong answers.

The value of a typed number comes from the tutor's one number reader
(:func:`tutor.marking.read_number` / :func:`~tutor.marking.read_numbers`); this
module only counts what the student wrote: :func:`typed_decimals` is the number of digits
after the point ("0.47" → 2, "1.5e-3" → 4, "1" → 0), or None for an exact form (a fraction,
a root, a power, e, π), which the diagnosis then compares exactly. :func:`read_typed`
reads a list of numbers with their decimals, and also takes ±inf ("-inf", "−∞") for a
masked score.

It is also the one door from a typed answer to the mistake catalogue: :func:`diagnose`
turns "what the student typed + where that number is computed (:class:`~tutor.marking.Link`)
+ the question's tolerance" into a :class:`Finding` (right, right at the digits typed, or the
catalogued mistakes that give the number, as :class:`~tutor.marking.Named` records), and
:func:`diagnosed` attaches them to a wrong :class:`~tutor.marking.Verdict`. The quiz (bank
questions and generated problems), exam papers, practice traces and class mode all call it;
:func:`explain` fills one mistake's lines for a multiple-choice distractor. The engine loads
on the first diagnosis, not on import.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine import mistakes
from tutor.inputs import trace_command
from tutor.marking import Link, Named, Verdict, read_numbers
from tutor.render.numbers import value as show

_DECIMAL = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d*))?(?:e([+-]?\d+))?$")
_PREFIX = re.compile(r"^(?:≈|~|=|≃)\s*")
_INFINITY = {"inf": math.inf, "+inf": math.inf, "∞": math.inf, "+∞": math.inf,
             "-inf": -math.inf, "-∞": -math.inf}
EXACT_DECIMALS = 12
"""Stands for "exact" in a list that mixes exact forms with decimals."""


def _plain(token: str) -> str:
    text = unicodedata.normalize("NFKC", token).strip().casefold()
    text = text.replace("−", "-").replace(" ", "").replace("\u2009", "")
    return _PREFIX.sub("", text)


def typed_decimals(token: str) -> int | None:
    """Digits typed after the decimal point of one number, or None for an exact form.

    ``0.47`` → 2, ``-0.5`` → 1, ``3`` → 0, ``25,600,000`` → 0, ``≈0.58`` → 2,
    ``1.5e-3`` → 4 (the last digit typed is in the 4th place), ``1e3`` → 0;
    ``3/4``, ``√3``, ``2^-3``, ``e``, ``inf`` → None.
    """
    text = _plain(token)
    if text in _INFINITY:
        return None
    m = _DECIMAL.match(text)
    if not m or not any(ch.isdigit() for ch in text):
        return None
    places = len(m.group(1) or "")
    exponent = int(m.group(2) or 0)
    return max(0, places - exponent)


def read_typed(text: str) -> list[tuple[str, float | None, int | None]]:
    """A typed list of numbers: each token with its value (None if it is not a number) and
    its decimals (:func:`typed_decimals`). ``inf``/``-inf``/``∞`` are read as infinities."""
    out: list[tuple[str, float | None, int | None]] = []
    for token, value in read_numbers(text):
        infinite = _INFINITY.get(_plain(token).strip("[](){}"))
        if infinite is not None:
            out.append((token, infinite, None))
        else:
            out.append((token, value, typed_decimals(token.strip("[](){}⟨⟩"))))
    return out


def parse_check(spec: str) -> tuple[str, list[float], list[int] | None]:
    """``VALUE=NUMBERS`` (``weights=0.64,0.18,0.18``, ``"P_T=2=0.1 0.2 0.7"``) → the value's
    name, the numbers, and the decimals typed (None when every number is an exact form).

    The numbers follow the last ``=``, so a name may hold one. Raises ``ValueError`` (one
    line) when there is no ``=``, no number, or a token that is not a number.
    """
    name, sep, numbers = spec.rpartition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(f"--check {spec!r}: expected VALUE=NUMBERS, e.g. weights=0.47,0.26,0.26")
    read = read_typed(numbers)
    if not read:
        raise ValueError(f"--check {name}: no numbers after '='; expected e.g. {name}=0.47")
    for token, value, _ in read:
        if value is None:
            raise ValueError(f"--check {name}: {token!r} is not a number; type decimals like "
                             "0.47, fractions like 3/4, or -inf")
    values = [v for _, v, _ in read if v is not None]  # every one, after the check above
    decimals = [d for _, _, d in read]
    if all(d is None for d in decimals):
        return name, values, None
    return name, values, [EXACT_DECIMALS if d is None else d for d in decimals]


# --------------------------------------------------------------------------- diagnosis


@dataclass(frozen=True)
class Finding:
    """What the mistake catalogue says about a typed number (see :func:`diagnose`)."""

    correct: bool
    imprecise: bool
    """Not right, but the right value at the digits typed (0.5 for 0.4711): too few digits."""
    named: tuple[Named, ...]
    """The catalogued mistakes (or pairs) giving the number; empty when right or unknown."""
    expected: str
    """The right value, formatted."""


def decimals_of(per_entry: Sequence[int | None]) -> int | list[int] | None:
    """Decimals per entry as :func:`engine.mistakes.diagnose` takes them: None when every
    number was an exact form, else :data:`EXACT_DECIMALS` standing for the exact ones."""
    if all(d is None for d in per_entry):
        return None
    return [EXACT_DECIMALS if d is None else d for d in per_entry]


def diagnose_values(values: Sequence[float], decimals: int | Sequence[int] | None, link: Link,
                    tolerance: float | None = None) -> Finding | None:
    """:func:`diagnose` on numbers already read (``decimals`` as :func:`decimals_of` gives
    them). None when the catalogue cannot check them (a value of another size)."""
    try:
        check = mistakes.diagnose(link.computation, link.inputs, link.value, list(values),
                                  decimals=decimals, tolerance=tolerance)
    except ValueError:  # a size the value does not have: nothing to say about it
        return None
    named = tuple(_named(d, link, check) for d in check.diagnoses)
    return Finding(bool(check.correct), bool(check.imprecise), named, show(check.expected))


def diagnose(text: str, link: Link, tolerance: float | None = None) -> Finding | None:
    """Mark ``text`` (one number or a list, typed at any precision) as value ``link.value``
    of ``link.computation`` on ``link.inputs`` and name the catalogued mistakes that give it.

    ``tolerance``: the question's (absolute, per entry) for "right"; None: right when it is
    the right value rounded to the digits typed. None is returned when the text is not
    numbers, or not as many as the value has (the caller's own reader says what to type).
    """
    read = read_typed(text)
    if not read or any(v is None for _, v, _ in read):
        return None
    return diagnose_values([float(v) for _, v, _ in read if v is not None],
                           decimals_of([d for _, _, d in read]), link, tolerance)


def diagnosed(verdict: Verdict, text: str, link: Link | None,
              tolerance: float | None = None) -> Verdict:
    """``verdict`` with the mistakes that give the student's number attached, when it marks a
    number wrong and ``link`` says where that number is computed; any other verdict (right,
    invalid, unlinked) comes back as it is, so a right answer is never diagnosed."""
    if link is None or not verdict.valid or verdict.correct is not False:
        return verdict
    found = diagnose(text, link, tolerance)
    if found is None or found.correct:
        return verdict
    if found.imprecise:
        return replace(verdict, reason=verdict.reason + " Right at the digits you typed: give "
                                                        "more of them.")
    return replace(verdict, diagnoses=found.named)


def explain(link: Link, mistake: str) -> Named | None:
    """The catalogue's lines for ``mistake`` on the linked value (what it gives and why), as a
    multiple-choice distractor that *is* that mistake shows them; None when the mistake does
    not change that value (or is not one of the computation's)."""
    try:
        wrong = mistakes.value_of(link.computation, link.inputs, link.value, (mistake,))
        check = mistakes.diagnose(link.computation, link.inputs, link.value, wrong.ravel())
    except ValueError:
        return None
    return next((_named(d, link, check) for d in check.diagnoses if d.ids == (mistake,)), None)


def _named(d: Any, link: Link, check: Any) -> Named:
    same = d.trace == link.computation
    replay = trace_command(d.trace, link.inputs if same and link.inputs else None)
    follow = trace_command(d.trace, check.follow_up) if same and check.follow_up else ""
    return Named("+".join(d.ids), d.title, show(d.value), d.explanation, d.lesson, d.anchor,
                 replay, trace_command(d.trace) + " --practice", follow)
