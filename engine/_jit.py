"""Numba options, in one place.

Every kernel in the engine is compiled through :func:`jit` (serial) or :func:`pjit`
(``parallel=True``). ``cache=True`` writes the machine code next to the source so a second
start-up loads it in milliseconds instead of compiling again.

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

The same options reach ``@overload`` implementations through :data:`OVERLOAD_OPTIONS`, and
the one LLVM intrinsic call that carries flags of its own (``llvm.maxnum`` in
``engine._intrinsics._fmax``) takes :data:`MAXNUM_FLAGS`.

**Interpreted mode.** A worked example multiplies 3 × 4 matrices: the arithmetic takes
microseconds, but loading numba and its cached machine code costs ~0.8 s of every start (numba's
import, then its first-use set-up, which also imports scipy.linalg). A process that only
builds worked examples calls :func:`use_interpreter` before any kernel module is imported; from
then on :func:`jit` hands back the function itself, so the *same kernel source* runs in the
Python interpreter, numba is never imported, and the LLVM intrinsics of
``engine._intrinsics`` are replaced by their plain-Python twins in
``engine._intrinsics_py``. The mode is per process and can only be chosen before the first
kernel exists (compiled and interpreted kernels cannot call each other). Results agree with
the compiled kernels to rounding: where a kernel allows FMA or reordered sums, the last bits
may differ (the trace tests compare every printed value of every trace in both modes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_BASE: dict[str, Any] = {"cache": True, "nogil": True}

FMA_FLAGS = frozenset({"contract"})
REDUCTION_FLAGS = frozenset({"contract", "reassoc", "nsz", "nnan"})
OVERLOAD_OPTIONS: dict[str, Any] = {"cache": True}
MAXNUM_FLAGS = ("nnan", "nsz")  # max of finite values (−inf allowed): vectorises as a reduction

_interpreted = False
_kernels_defined = 0  # kernels made by jit() so far, in either mode


def use_interpreter() -> bool:
    """Run every kernel of this process as plain Python (see the module docstring).

    Returns True if the process is now (or already was) interpreted; False if kernels were
    already compiled, in which case nothing changes and the compiled kernels are used.
    """
    global _interpreted
    if _kernels_defined and not _interpreted:
        return False
    _interpreted = True
    return True


def interpreted() -> bool:
    """Whether kernels are plain Python functions in this process."""
    return _interpreted


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
    global _kernels_defined
    _kernels_defined += 1
    if _interpreted:
        return fn
    import numba

    return numba.njit(**options)(fn)


def pjit(fn: Callable | None = None, *, fma: bool = False, reduction: bool = False,
         **overrides: Any):
    """Like :func:`jit` with ``parallel=True``; only for big loops (cold compile costs seconds)."""
    return jit(fn, fma=fma, reduction=reduction, parallel=True, **overrides)
