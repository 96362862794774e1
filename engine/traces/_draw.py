"""Small helpers the traces' ``draw_inputs(rng)`` share: numbers a student can work by hand.

Every trace module draws fresh inputs for practice and for the diagnosis harness with
``draw_inputs(rng)``: small integers or one-decimal numbers, worked-example sizes. These
helpers keep the draws on a printable grid (``0.30000000000000004`` never appears).
"""

from __future__ import annotations

import numpy as np


def grid(rng: np.random.Generator, lo: float, hi: float, step: float = 0.1,
         size: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Numbers ``step`` apart from ``lo`` to ``hi`` (inclusive), rounded so they print cleanly."""
    k = rng.integers(round(lo / step), round(hi / step) + 1, size=size)
    return np.round(k * step, 6) + 0.0


def nonzero(rng: np.random.Generator, lo: float, hi: float, step: float = 0.1,
            size: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Like :func:`grid`, redrawn until the array is not all zeros."""
    while True:
        out = grid(rng, lo, hi, step, size)
        if np.any(out != 0):
            return out


def simplex(rng: np.random.Generator, n: int, step: float = 0.1, least: float | None = None) -> np.ndarray:
    """``n`` probabilities on a ``step`` grid, each at least ``least`` (default one step),
    summing to exactly 1 in the grid's units."""
    units = round(1 / step)
    low = round((step if least is None else least) / step)
    if n * low > units:
        raise ValueError(f"cannot split 1 into {n} parts of at least {least}")
    spare = units - n * low
    cuts = np.sort(rng.integers(0, spare + 1, size=n - 1))
    parts = np.diff(np.concatenate(([0], cuts, [spare]))) + low
    return np.round(parts * step, 6) + 0.0


def partial_simplex(
    rng: np.random.Generator, n: int, step: float = 0.1, total_max: float = 1.0
) -> np.ndarray:
    """``n`` positive probabilities on a ``step`` grid whose sum is at most ``total_max``."""
    units = round(total_max / step)
    while True:
        parts = rng.integers(1, units, size=n)
        if parts.sum() <= units:
            return np.round(parts * step, 6) + 0.0


def choice(rng: np.random.Generator, options):
    """One of ``options`` (any sequence), as its own type."""
    return options[int(rng.integers(len(options)))]


def seed(rng: np.random.Generator) -> int:
    """A seed for the traces that draw their own weights."""
    return int(rng.integers(0, 1000))
