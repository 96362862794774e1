"""One shared guard that keeps BLAS on a single thread while engine kernels run.

The kernels call scipy's OpenBLAS (through numba's ``np.dot``) on small blocks from several
threads of their own (tiled attention's pool, the lab's two models). OpenBLAS threads on top
only add synchronisation and oversubscribe the two cores ("Detect OpenMP Loop").

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
"""

from __future__ import annotations

import threading


class SingleThreadedBlas:
    """``with single_threaded_blas:`` (or ``with single_threaded_blas():``) — ~15 µs to enter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._controller = None
        self._limiter = None

    def __call__(self) -> SingleThreadedBlas:
        return self

    def __enter__(self) -> None:
        with self._lock:
            if self._controller is None:
                import scipy.linalg.cython_blas  # noqa: F401 - loads the BLAS the kernels call
                from threadpoolctl import ThreadpoolController

                self._controller = ThreadpoolController()
            if self._depth == 0:
                _release_ownership()
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._limiter is not None:
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
