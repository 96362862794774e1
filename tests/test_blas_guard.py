"""engine._blas: the single-thread BLAS guard reaches worker threads, not only the main one."""

from __future__ import annotations

import threading

from engine._blas import single_threaded_blas


def _openblas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [d["num_threads"] for d in threadpool_info() if d["internal_api"] == "openblas"]


def test_the_guard_reaches_a_worker_thread_after_the_main_thread_used_it():
    with single_threaded_blas():                 # the main thread limits and restores first,
        assert set(_openblas_threads()) <= {1}   # as every lab warm-up does
    outside = _openblas_threads()
    seen: list[list[int]] = []

    def work() -> None:
        with single_threaded_blas():
            seen.append(_openblas_threads())
        seen.append(_openblas_threads())

    for _ in range(2):                           # two workers, one after the other
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert seen[0] and set(seen[0]) == {1} and set(seen[2]) == {1}
    assert seen[1] == outside and _openblas_threads() == outside   # each thread's own value back
