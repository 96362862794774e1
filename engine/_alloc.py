"""Keep freed heap memory in the process while the lab trains (glibc's ``mallopt``).

A training step allocates its activations, caches and gradients (NumPy arrays of 10 KB to a
few MB), and frees them when the step ends. glibc's malloc then gives the top of the heap back
to the kernel (``trim``) once more than its trim threshold is free, and serves big requests by
``mmap`` — so the next step page-faults the same memory in again, zeroed by the kernel. For the
lab's Transformer that was ~780 minor page faults a step and ~15 % of its time in the kernel on
one thread; two threads training side by side (the lab's two runs) fault in one address space
and serialise on its memory map lock (measured on a 2-core AMD EPYC, see
``benchmarks/README.md``: one thread 83 → 110 steps/s, two threads 64 → 96 steps/s each).

:func:`keep_freed_memory` fixes both thresholds (which also stops glibc raising them
dynamically), so freed blocks stay in the heap for the next step: a process keeps at most
``TRIM_BYTES`` of free memory more than it would otherwise. It changes process-wide malloc
settings, so only the lab's training loops call it (the tutor's processes that train), never
importing the engine. Anywhere but glibc (macOS, Windows, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

M_TRIM_THRESHOLD = -1  # glibc's <malloc.h> parameter numbers
M_MMAP_THRESHOLD = -3
MMAP_BYTES = 32 << 20  # glibc's largest mmap threshold on 64-bit (HEAP_MAX_SIZE / 2)
TRIM_BYTES = 256 << 20

_lock = threading.Lock()
_applied: bool | None = None  # None: not tried yet


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``gnu_get_libc_version`` and ``mallopt``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not (hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt")):
        return None
    return libc


def keep_freed_memory() -> bool:
    """Fix glibc's trim and mmap thresholds (once per process); True when they are set."""
    global _applied
    with _lock:
        if _applied is None:
            libc = _glibc()
            _applied = bool(libc is not None
                            and libc.mallopt(M_MMAP_THRESHOLD, MMAP_BYTES) == 1
                            and libc.mallopt(M_TRIM_THRESHOLD, TRIM_BYTES) == 1)
        return _applied
