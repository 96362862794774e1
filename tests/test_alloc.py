"""engine._alloc: the lab's training loops keep freed memory instead of faulting it in again."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from engine import _alloc

# 30 "steps", each writing sixteen fresh 1 MiB arrays and freeing them all at its end, as a
# training step does with its activations; prints the minor page faults of the steps
_FAULTS = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from engine._alloc import keep_freed_memory
    if sys.argv[1] == "keep":
        assert keep_freed_memory()
    np.ones(1 << 19)                                   # numpy's own first-use allocations
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(30):
        step = [np.ones(1 << 17) for _ in range(16)]   # 16 MiB of float64, every page written
        del step
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(_alloc._glibc() is None, reason="glibc's mallopt only")
def test_kept_memory_is_faulted_in_once_not_on_every_step():
    pages = (16 << 20) // 4096                         # 4096 pages a step
    default, kept = _faults("default"), _faults("keep")
    assert default >= 20 * pages                       # glibc trims the heap after every step
    assert kept < 2 * pages                            # faulted in once, then reused


def test_keeping_is_done_once_and_says_whether_it_applies(monkeypatch):
    monkeypatch.setattr(_alloc, "_applied", None)
    calls = []
    monkeypatch.setattr(_alloc, "_glibc", lambda: calls.append(1))  # returns None: not glibc
    assert _alloc.keep_freed_memory() is False
    assert _alloc.keep_freed_memory() is False
    assert calls == [1]
