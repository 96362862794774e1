"""Numba, in one place: the engine's only import of numba, and the options of every kernel.

**One import, under a lock.** Python imports a package from two threads at once badly: while
one thread runs numba's ``__init__`` the other can see a half-initialised module and fail
with "cannot import name … from partially initialized module" (a first run of the tutor did,
when the trace screen and the warm-up both reached the engine). So no module imports numba
or llvmlite itself (``tests/test_jit.py`` scans the source): kernel modules get their
decorators from :func:`jit`, the tiled attention's LLVM intrinsics (``engine._intrinsics``)
get numba's modules from :func:`load`, and both import under one lock, once per process.

Every kernel is compiled through :func:`jit` (serial) or :func:`pjit` (``parallel=True``).
``cache=True`` writes the machine code next to the source so a second start-up loads it in
milliseconds instead of compiling again.

Fast-math is off by default and never all on: the masks use ``-inf`` and a fully masked row
must stay exactly zero, which the ``ninf`` flag would let the compiler break (and ``nnan``
would let it drop the checks that keep NaN out). A kernel opts in to one of two named sets:

- ``fma=True`` → :data:`FMA_FLAGS` (``contract``): fused multiply-add, one rounding instead
  of two. Safe everywhere; the base-2 exponential of the tiled kernels relies on *not*
  having ``reassoc``, which would fold its rounding trick (v + M) − M into v.
- ``reduction=True`` → :data:`REDUCTION_FLAGS` (``contract``, ``reassoc``, ``nsz``,
  ``nnan``): lets LLVM reorder a sum or max into vector lanes. Only for loops over values
  already checked finite (the public functions reject NaN/inf inputs); ``-inf`` from a mask
  is still handled because ``ninf`` is not in the set. Results may differ from a serial
  loop in the last bits.

**Interpreted mode.** A worked example multiplies 3 × 4 matrices: the arithmetic takes
microseconds, but loading numba and its cached machine code costs most of a second. A process
started with the environment variable :data:`KERNELS_VARIABLE` set to ``python`` runs every
kernel as the plain Python function it is written as: :func:`jit` hands back the function
itself and numba is never imported. The variable is read once, when this module is imported,
so the mode is the process's from start to end; the ``attn-tutor`` console script sets it
for the commands that only build worked examples (``tutor.runmode``). Results agree with the
compiled kernels to rounding (the trace tests compare every printed value in both modes).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

KERNELS_VARIABLE = "ATTN_TUTOR_KERNELS"
"""``python``: run the kernels interpreted (see the module docstring); anything else: numba."""

_BASE: dict[str, Any] = {"cache": True, "nogil": True}

FMA_FLAGS = frozenset({"contract"})
REDUCTION_FLAGS = frozenset({"contract", "reassoc", "nsz", "nnan"})
OVERLOAD_OPTIONS: dict[str, Any] = {"cache": True}
MAXNUM_FLAGS = ("nnan", "nsz")  # max of finite values (−inf allowed): vectorises as a reduction

_INTERPRETED = os.environ.get(KERNELS_VARIABLE, "").strip().lower() == "python"
_lock = threading.RLock()
_numba: ModuleType | None = None


def interpreted() -> bool:
    """Whether kernels are plain Python functions in this process (fixed at start)."""
    return _INTERPRETED


def numba() -> ModuleType:
    """The numba package, imported once for the whole process under this module's lock."""
    global _numba
    if _INTERPRETED:
        raise RuntimeError(f"numba is not loaded in interpreted mode ({KERNELS_VARIABLE}=python)")
    with _lock:
        if _numba is None:
            _numba = importlib.import_module("numba")
        return _numba


def load(name: str) -> ModuleType:
    """A numba or llvmlite module (``"numba.core.cgutils"``, ``"llvmlite.ir"``), imported under
    the same lock, after numba itself. Only the tiled attention's intrinsics need these."""
    if name.partition(".")[0] not in ("numba", "llvmlite"):
        raise ValueError(f"name: expected a numba or llvmlite module, got {name!r}")
    with _lock:
        numba()
        return importlib.import_module(name)


def jit(fn: Callable | None = None, *, fma: bool = False, reduction: bool = False,
        **overrides: Any):
    """``numba.njit`` with the project's defaults (cache, nogil, no unsafe fast-math).

    Args:
        fn: the function (or None, to use as ``@jit(...)``).
        fma: allow fused multiply-add (:data:`FMA_FLAGS`).
        reduction: allow reordering sums and maxima over finite values
            (:data:`REDUCTION_FLAGS`; implies ``fma``).
        **overrides: other ``numba.njit`` options (not ``fastmath``: pick a named set).
    """
    if "fastmath" in overrides:
        raise TypeError("jit: pass fma=True or reduction=True instead of fastmath= "
                        "(the allowed flag sets live in engine._jit)")
    options = dict(_BASE)
    if reduction:
        options["fastmath"] = set(REDUCTION_FLAGS)
    elif fma:
        options["fastmath"] = set(FMA_FLAGS)
    options.update(overrides)
    if fn is None:
        return lambda f: _make(f, options)
    return _make(fn, options)


def _make(fn: Callable, options: dict[str, Any]) -> Callable:
    if _INTERPRETED:
        return fn
    return numba().njit(**options)(fn)


def pjit(fn: Callable | None = None, *, fma: bool = False, reduction: bool = False,
         **overrides: Any):
    """Like :func:`jit` with ``parallel=True``; only for big loops (cold compile costs seconds)."""
    return jit(fn, fma=fma, reduction=reduction, parallel=True, **overrides)


def default_threads() -> int:
    """The threads numba would use (``NUMBA_NUM_THREADS``, default the usable cores), read from
    its configuration without starting its parallel threading layer; 1 when interpreted."""
    if _INTERPRETED:
        return 1
    return max(1, int(load("numba.core.config").NUMBA_NUM_THREADS))


def version() -> str:
    """numba's version ("interpreted" in interpreted mode)."""
    return "interpreted" if _INTERPRETED else str(numba().__version__)
