"""How numbers are written: the one number format of the engine and the tutor.

Every number a student reads — a trace's step text, a generated problem, an exam question,
a mark scheme, a marking message — is written by one of these functions, so ``0.4621``,
``[0.5, -0.2]`` and ``[1, 0; 0, 1]`` look the same everywhere:

* :func:`number`: one number as a student writes it (``0.4621``, ``-0.0071``, ``3``, ``-inf``);
* :func:`exact`: up to ten significant digits, for echoing what a student typed and for
  stated tolerances (``0.0078125``);
* :func:`vector`: ``[a, b, c]``;
* :func:`matrix`: ``[a, b; c, d]`` — the one matrix notation: entries of a row separated by
  commas, rows by semicolons, one pair of brackets (the ``--set`` syntax ``a, b; c, d`` in
  brackets);
* :func:`value`: any of them (a scalar, a vector, a matrix, words), chosen by shape.

Pure Python: NumPy scalars and arrays are read through their ``tolist()``, so the tutor's
light commands can format without importing NumPy. (``engine.trace.fmt_num`` and
``engine.trace.fmt`` are these functions under their older names.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["exact", "matrix", "number", "value", "vector"]


def _python(x: Any) -> Any:
    """A NumPy scalar or array as Python numbers and lists (anything else as it is)."""
    tolist = getattr(x, "tolist", None)
    return tolist() if callable(tolist) else x


def number(x: Any, digits: int = 4) -> str:
    """A number the way a student writes it: ``0.4621``, ``-0.0071``, ``3``, ``-inf``.

    Whole numbers print without a point (up to 1e15); others are rounded to ``digits``
    decimals, or written as ``1.235e-05`` when smaller than ``10**-digits`` or from 1e7 on.
    Booleans print as ``true`` / ``false``.
    """
    x = _python(x)
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    if x != 0 and (abs(x) < 10 ** -digits or abs(x) >= 1e7):
        return f"{x:.{max(digits - 1, 1)}e}"
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def exact(x: Any) -> str:
    """A number with up to ten significant digits (``0.0078125``, ``25600000``, ``0.3333333333``)."""
    return f"{float(_python(x)):.10g}"


def vector(xs: Iterable[Any], digits: int = 4) -> str:
    """``[a, b, c]``: numbers (or words) separated by commas, in brackets."""
    return "[" + ", ".join(x if isinstance(x, str) else number(x, digits) for x in _python(xs)) + "]"


def matrix(rows: Iterable[Sequence[Any]], digits: int = 4) -> str:
    """``[a, b; c, d]``: a row's entries separated by commas, rows by semicolons."""
    return "[" + "; ".join(", ".join(number(x, digits) for x in row) for row in _python(rows)) + "]"


def value(v: Any, digits: int = 4) -> str:
    """A scalar, vector, matrix or list of words on one line, as :func:`number`,
    :func:`vector` or :func:`matrix` write it; a string is returned as it is. A stack of
    matrices is written matrix by matrix: ``[[a, b; c, d]; [e, f; g, h]]``."""
    v = _python(v)
    if isinstance(v, str):
        return v
    if not isinstance(v, (list, tuple)):
        return number(v, digits)
    if v and all(isinstance(row, (list, tuple)) for row in v):
        if any(isinstance(x, (list, tuple)) for row in v for x in row):
            return "[" + "; ".join(value(block, digits) for block in v) + "]"
        return matrix(v, digits)
    return vector(v, digits)
