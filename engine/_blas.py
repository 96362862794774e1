"""One shared guard that keeps BLAS on a single thread while engine kernels run.

The kernels call scipy's OpenBLAS (through ``numba_xxgemm``, numba's bridge to it: see
``engine._intrinsics._gemm``) on small blocks from several threads of their own (tiled
attention's pool, the lab's two models). OpenBLAS threads on top only add synchronisation
and oversubscribe the two cores ("Detect OpenMP Loop").

The guard is reference-counted, so overlapping uses from several Python threads restore the
user's setting once, when the last one leaves (a plain ``limit()`` per call would let the
first leaver restore it under the second). scipy's OpenBLAS is loaded before threadpoolctl
looks for libraries, or the limit would silently miss it; one controller is built once,
because ``threadpool_limits(1)`` rescans every loaded library on each call (~1 ms).

threadpoolctl 3.8 lets only one Python thread change a pthreads OpenBLAS's thread count: the
first that set a limit, for as long as it lives, unless the limit is used as a ``with`` block
in that same thread. The guard sets and restores from whichever thread enters first and leaves
last, so it clears that ownership around each change (:func:`_release_ownership`); otherwise
the main thread, once it had used the guard, kept the ownership and the lab's training threads'
limits were silently ignored — two OpenBLAS threads per call, spinning on a busy machine.

As a second line, the guard also calls OpenBLAS's own ``openblas_set_num_threads_local(1)``
directly (where the library has it), which no Python-side ownership can drop, from whichever
thread enters first, and puts the previous value back when the last one leaves.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any


class SingleThreadedBlas:
    """``with single_threaded_blas:`` (or ``with single_threaded_blas():``) — ~15 µs to enter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._controller: Any = None  # threadpoolctl objects (untyped), made on first use
        self._limiter: Any = None
        self._local_setters: list[Callable[[int], int]] = []
        self._saved: list[int] = []

    def __call__(self) -> SingleThreadedBlas:
        return self

    def _load(self) -> None:
        import ctypes

        import scipy.linalg.cython_blas  # noqa: F401 - loads the BLAS the kernels call
        from threadpoolctl import ThreadpoolController

        self._controller = ThreadpoolController()
        for lib in self._controller.lib_controllers:
            if lib.internal_api != "openblas":
                continue
            try:
                fn = ctypes.CDLL(lib.filepath).openblas_set_num_threads_local
            except (OSError, AttributeError):  # an older OpenBLAS: the global limit suffices
                continue
            fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
            self._local_setters.append(fn)

    def architecture(self) -> str | None:
        """The name OpenBLAS gives the kernels it chose for this CPU in the library the
        kernels call (scipy's: e.g. "SkylakeX", "Haswell", "Zen"), or None when that BLAS
        is not an OpenBLAS or does not say. Which kernels run decides the best tiling of
        :func:`engine.flash.flash_attention` (see :func:`engine.flash.default_tiles`)."""
        with self._lock:
            if self._controller is None:
                self._load()
        found = [lib for lib in self._controller.lib_controllers
                 if lib.internal_api == "openblas" and getattr(lib, "architecture", None)]
        # numpy's own OpenBLAS may be loaded too: scipy's (in scipy.libs) is the one called
        found.sort(key=lambda lib: "scipy" not in os.path.basename(os.path.dirname(lib.filepath)))
        return str(found[0].architecture) if found else None

    def __enter__(self) -> None:
        with self._lock:
            if self._controller is None:
                self._load()
            if self._depth == 0:
                _release_ownership()
                self._limiter = self._controller.limit(limits=1, user_api="blas")
                self._saved = [setter(1) for setter in self._local_setters]
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for setter, old in zip(self._local_setters, self._saved):
                    setter(old)
                if self._limiter is not None:
                    _release_ownership()
                    self._limiter.restore_original_limits()
                    self._limiter = None
                    _release_ownership()


def _release_ownership() -> None:
    """Let the calling thread set OpenBLAS's threads (threadpoolctl ≥ 3.8; no-op before)."""
    try:
        from threadpoolctl import OpenBLASController
    except ImportError:
        return
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


single_threaded_blas = SingleThreadedBlas()
