"""Small helpers the trace builders share: writing numbers into step text (through
:mod:`engine.format`), rounding as people do by hand, seeded example draws, the shift that
keeps ``e^score`` finite, one-hot vectors and vocabulary look-ups. The attention maths
itself lives in the engine's concept modules, not here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from engine.trace import fmt, fmt_num

_SUB = str.maketrans("0123456789-+()", "₀₁₂₃₄₅₆₇₈₉₋₊₍₎")


def sub(index: int | str) -> str:
    """Unicode subscript: ``sub(12)`` → ``₁₂`` (digits and signs only)."""
    return str(index).translate(_SUB)


def n(x: float, digits: int = 4) -> str:
    """One number as :func:`engine.format.number` writes it (``-0.25``, no parentheses: after
    an operator use :func:`p`)."""
    return fmt_num(x, digits)


def p(x: float, digits: int = 4) -> str:
    """A number ready to sit after ``+``, ``−`` or ``·``: negatives get parentheses."""
    text = fmt_num(x, digits)
    return f"({text})" if text.startswith("-") else text


def v(value, digits: int = 4) -> str:
    """Scalar, vector or matrix on one line (``[a, b]``, ``[a, b; c, d]``)."""
    return fmt(value, digits)


def vfixed(value, digits: int) -> str:
    """A vector with a fixed number of decimals, as the notes print it: ``[0.20, -0.17]``."""
    return "[" + ", ".join(fixed(float(x), digits) for x in np.ravel(value)) + "]"


def dot_terms(a: Iterable[float], b: Iterable[float], digits: int = 4) -> str:
    """``0.5·0.3 + (-0.2)·0.8``: a dot product written out term by term."""
    return " + ".join(f"{p(x, digits)}·{p(y, digits)}" for x, y in zip(a, b))


def weighted_terms(weights: Iterable[float], things: Iterable[str], digits: int = 4) -> str:
    """``0.2·2 + 0.35·8 + …``: a weighted sum written out."""
    return " + ".join(f"{p(w, digits)}·{t}" for w, t in zip(weights, things))


def lines(*parts: str) -> str:
    """Join substitution lines (renderers indent the continuation lines)."""
    return "\n".join(part for part in parts if part)


def as_labels(tokens: Sequence[str]) -> list[str]:
    return [str(t) for t in tokens]


def argmax_label(values: np.ndarray, labels: Sequence[str]) -> str:
    return str(labels[int(np.argmax(values))])


def ordinal(k: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``: a rank as people write it."""
    if 10 <= k % 100 <= 20:
        return f"{k}th"
    return f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th') }"


def exp_shift(scores) -> float:
    """What to subtract from every score before exponentiating: 0, or their max when it is large.

    The traces show e^score as the notes do; a student's scores of ±1000 would overflow to
    inf (or all underflow to 0) and give nan weights. Softmax does not change when one number
    is subtracted from every score, so then the traces show e^(score − max) instead.
    """
    m = float(np.max(scores))
    return m if abs(m) > 50 else 0.0


def r(x, digits: int):
    """Round half away from zero, as people do by hand (0.205 → 0.21, -0.025 → -0.03).

    A tiny allowance absorbs binary representation (0.205 is stored as 0.20499999…).
    Works on scalars and arrays.
    """
    scale = 10.0 ** digits
    out = np.sign(x) * np.floor(np.abs(x) * scale + 0.5 + 1e-9) / scale + 0.0
    return float(out) if np.ndim(out) == 0 else out


def fixed(x: float, digits: int) -> str:
    """``fixed(0.3041, 3)`` → ``0.304``; the notes' way of printing a rounded value."""
    text = f"{r(x, digits):.{digits}f}"
    return "0." + "0" * digits if text in ("-0." + "0" * digits,) else text


class Draw:
    """Small readable random numbers for built examples, from one seeded generator.

    ``draw(3, 4)`` is N(0, scale²) rounded to ``decimals``: rounding keeps the trace easy to
    follow by hand, and every later number is computed from the rounded values.
    """

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, *shape: int, scale: float = 0.5, decimals: int = 1) -> np.ndarray:
        return np.round(self.rng.normal(0.0, scale, size=shape), decimals) + 0.0


def one_hot(index: int, size: int) -> np.ndarray:
    out = np.zeros(size)
    out[index] = 1.0
    return out


def word_index(word: str, vocab: Sequence[str], input_name: str) -> int:
    """Position of ``word`` in ``vocab``; a one-line ``ValueError`` naming the input otherwise."""
    try:
        return list(vocab).index(word)
    except ValueError:
        raise ValueError(f"input {input_name}: got {word!r}, expected one of the vocabulary: "
                         + ", ".join(vocab)) from None
