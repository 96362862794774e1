"""Numba options, in one place.

Every kernel in the engine is compiled through :func:`jit` (serial) or :func:`pjit`
(``parallel=True``). ``cache=True`` writes the machine code next to the source so a second
start-up loads it in milliseconds instead of compiling again.

``fastmath`` is off: the masks use ``-inf`` and a fully masked row must stay exactly zero,
which the ``nnan``/``ninf`` fast-math flags would allow the compiler to break. Only
``contract`` (fused multiply-add) is allowed where a kernel opts in with ``fma=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba

_BASE: dict[str, Any] = {"cache": True, "nogil": True}


def jit(fn: Callable | None = None, *, fma: bool = False, **overrides: Any):
    """``numba.njit`` with the project's defaults (cache, nogil, no unsafe fast-math)."""
    options = dict(_BASE)
    if fma:
        options["fastmath"] = {"contract"}
    options.update(overrides)
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


def pjit(fn: Callable | None = None, *, fma: bool = False, **overrides: Any):
    """Like :func:`jit` with ``parallel=True``; only for big loops (cold compile costs seconds)."""
    return jit(fn, fma=fma, parallel=True, **overrides)
