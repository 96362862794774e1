"""Which mistakes are switched on in one run of a computation (:class:`Slips`).

A computation (one per trace, ``engine.mistakes.computations``) is the trace's arithmetic
written once, with each catalogued slip behind a switch::

    scores = dots / s.scale(d_k)              # 1/√d_k, or a slip's stand-in
    if s.on("no-exp"):
        ...

``Slips()`` (nothing on) is the right computation; ``Slips(["no-scale"])`` builds that mistake
in, and two ids build a pair. :meth:`Slips.r` rounds an intermediate to two decimals only
while ``rounded-intermediates`` is on. A run also collects ``facts``: the numbers of this
problem that the catalogue's explanations quote (``d_k``, ``sqrt_dk``, …).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

ROUNDING = "rounded-intermediates"
DIGITS = 2
"""Decimals an intermediate keeps under ``rounded-intermediates``."""


def round_half_away(x: Any, digits: int = DIGITS) -> Any:
    """Round as people do by hand (0.205 → 0.21, −0.025 → −0.03); scalars and arrays.

    The same rule as the traces' own rounding note (``engine.traces._common.r``); ±inf stays.
    """
    arr = np.asarray(x, dtype=np.float64)
    scale = 10.0 ** digits
    with np.errstate(invalid="ignore"):
        out = np.where(np.isfinite(arr),
                       np.sign(arr) * np.floor(np.abs(arr) * scale + 0.5 + 1e-9) / scale + 0.0, arr)
    return float(out) if out.ndim == 0 else out


class Slips:
    """The mistakes switched on for one run, and what that run learned about the problem.

    Args:
        ids: mistake ids to build in (``()`` = the right computation).
    """

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self.ids = frozenset(ids)
        self.asked: set[str] = set()
        self.facts: dict[str, Any] = {}

    def on(self, mistake: str) -> bool:
        """Whether ``mistake`` is built in; every id a computation asks about is recorded,
        so a test can check that the ids it declares are the ids it consults."""
        self.asked.add(mistake)
        return mistake in self.ids

    def r(self, x: Any) -> Any:
        """``x`` rounded to two decimals under ``rounded-intermediates``; else ``x`` itself."""
        return round_half_away(x) if self.on(ROUNDING) else x

    def fact(self, **values: Any) -> None:
        """Record numbers of this problem for the explanations (``{d_k}``, ``{sqrt_dk}``)."""
        self.facts.update(values)
