"""How precisely a student typed a number, for the diagnosis of wrong answers.

The value of a typed number comes from the tutor's one number reader
(:func:`tutor.quiz.marking.read_number` / :func:`~tutor.quiz.marking.read_numbers`); this
module only counts what the student wrote: :func:`typed_decimals` is the number of digits
after the point ("0.47" → 2, "1.5e-3" → 4, "1" → 0), or None for an exact form (a fraction,
a root, a power, e, π), which the diagnosis then compares exactly. :func:`read_typed`
reads a list of numbers with their decimals, and also takes ±inf ("-inf", "−∞") for a
masked score. Pure Python.
"""

from __future__ import annotations

import math
import re
import unicodedata

from tutor.quiz.marking import read_numbers

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
    out = []
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
    decimals = [d for _, _, d in read]
    if all(d is None for d in decimals):
        return name, [v for _, v, _ in read], None
    return name, [v for _, v, _ in read], [EXACT_DECIMALS if d is None else d for d in decimals]
