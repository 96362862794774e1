"""A first run: two threads reach the engine at once while nothing is cached yet.

The TUI's warm-up thread and a screen's worker (the trace screen, when the student presses
`2` at once) used to import numba side by side; in 5 of 9 fresh installs one of them saw a
half-initialised numba ("cannot import name … from partially initialized module"). numba is
now imported once, under a lock (engine._jit); this reproduces the race on an empty numba
cache, in fresh processes with no bytecode written (a slower import, a wider window).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RACE = """
import sys, threading, traceback
import numpy as np
barrier = threading.Barrier(2)
errors = []

def warm_up():                      # what the TUI's warm-up thread does first
    barrier.wait()
    try:
        from tutor.warmup import WarmUp
        from engine.softmax import softmax
        w = WarmUp({"softmax": lambda: softmax(np.ones((2, 3)))})
        w._run()                     # in this thread: numba first, then the area
    except BaseException:
        errors.append(traceback.format_exc())

def trace_screen():                 # the trace screen's worker, at the same moment
    barrier.wait()
    try:
        from engine.traces import build
        build("qkv")
    except BaseException:
        errors.append(traceback.format_exc())

threads = [threading.Thread(target=f) for f in (warm_up, trace_screen)]
for t in threads: t.start()
for t in threads: t.join()
print("\\n".join(errors) or "ok")
"""


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
def test_two_threads_reach_the_engine_at_once_on_an_empty_cache(tmp_path, round_):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"),
           "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("ATTN_TUTOR_KERNELS", None)
    proc = subprocess.run([sys.executable, "-B", "-c", RACE], capture_output=True, text=True,
                          timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok", proc.stdout[-3000:]
