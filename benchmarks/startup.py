"""Benchmark: start-up budgets — CLI start, warm trace, the first run's warm-up, cached load.

Run: ``python benchmarks/startup.py`` (``--runs 7``). Every number is the wall time of a fresh
process (or of one step inside a fresh process), median of ``--runs`` unless noted:

1. ``attn-tutor --help``                    budget 0.3 s (imports neither numba nor textual)
2. ``attn-tutor trace qkv --json``          budget 0.3 s, caches warm (one run first); the
   worked example runs interpreted (``ATTN_TUTOR_KERNELS=python``, set by the console script)
3. the whole warm-up from an empty numba cache, as the TUI's warm-up thread runs it: one fresh
   process with ``NUMBA_CACHE_DIR`` at a new temporary directory imports numba, then runs
   every area of ``tutor.warmup.areas()`` in order, timing each (wall and CPU seconds; plus a
   few kernels no area reaches, shown apart); budget 25 s in all. Then the same child on the
   filled cache: the load every later start pays, budget 1.5 s.
4. what a feature waits for on an empty cache in the TUI: a fresh process starts the warm-up
   thread, and half a second later (the student pressing a key at first paint) a feature asks
   for its area (``WarmUp.wait_for``: it jumps the queue) — the seconds until it is loaded.
   Budget 8 s each.
5. every command a student can run without the TUI, each on its own empty numba cache and
   fresh ``ATTN_TUTOR_HOME``: wall seconds to exit, stdin from /dev/null, and for the two labs
   the wait until their first line of training (budget 8 s). Median and max of
   ``min(--runs, 3)`` runs. ``--commands`` prints only this part.

The CLI is the ``attn-tutor`` script next to this Python (``python -m tutor`` if there is
none). The CPU (``lscpu``'s model name) and the load average are printed with each part: on
a shared machine, run it twice and keep the quieter run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tui_paint import bytecode_note, cpu_model  # noqa: E402 - the sibling script, for the same CPU name

FEATURES = ("trace qkv", "trace beam-search", "seq2seq lab", "transformer lab", "tiled attention")
"""The areas part 4 asks for, one fresh process each."""


def load_line() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _extra_calls():
    """Kernels no warm-up area reaches (or reaches in another dtype), timed apart."""
    import importlib

    import numpy as np

    def call(module, name, *args, **kwargs):
        return lambda: getattr(importlib.import_module(module), name)(*args, **kwargs)

    x32 = np.ones((4, 3), np.float32)
    big = np.ones((128, 16), np.float32)  # L·S·d_k = 2¹⁸: the BLAS kernels
    return [
        ("tiled attention float64 (on request)", call("engine.flash", "flash_attention",
                                                      x32.astype(np.float64), x32, x32)),
        ("tiled attention backward float32", call("engine.flash_backward",
                                                  "flash_attention_backward", x32, x32, x32, x32)),
        ("attention backward, BLAS path", call("engine.attention_backward", "attention_backward",
                                               big, big, big, None, big)),
    ]


def child() -> None:
    """In a fresh process: time the numba import, then each warm-up area; print JSON."""
    sys.path.insert(0, str(ROOT))
    t0, c0 = time.perf_counter(), time.process_time()
    from engine._jit import numba

    numba()
    timings = [("import numba", time.perf_counter() - t0, time.process_time() - c0)]
    from tutor.warmup import areas

    extra = _extra_calls()
    for name, fn in list(areas().items()) + extra:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - report, do not stop the benchmark
            name += f" (failed: {type(exc).__name__}: {exc})"
        timings.append((name, time.perf_counter() - t0, time.process_time() - c0))
    print(json.dumps({"timings": timings, "extra": [n for n, _ in extra]}))


def feature_child(area: str) -> None:
    """In a fresh process: the TUI's warm-up thread, and ``area`` asked for 0.5 s later."""
    sys.path.insert(0, str(ROOT))
    from tutor.warmup import WarmUp, areas

    warm = WarmUp(areas())
    warm.start()
    time.sleep(0.5)
    t0 = time.perf_counter()
    warm.wait_for([area])
    print(json.dumps({"wait": time.perf_counter() - t0}))


def run_child(cache_dir: str, *args: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env.pop("ATTN_TUTOR_KERNELS", None)
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli() -> list[str]:
    script = Path(sys.executable).with_name("attn-tutor")
    if script.exists():
        return [str(script)]
    found = shutil.which("attn-tutor")
    return [found] if found else [sys.executable, "-m", "tutor"]


def wall(cmd: list[str], runs: int) -> tuple[float, float]:
    """(median, min) seconds of ``runs`` fresh processes; output discarded."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       cwd=tempfile.gettempdir())
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


COLD_COMMANDS: list[tuple[str, ...]] = [
    ("trace", "qkv", "--json"),
    ("trace", "training-step", "--json"),
    ("trace", "scaling", "--plain"),            # compiled: its default is a 20-point sweep
    ("heatmap",),                               # the listing: every trace's heatmaps
    ("heatmap", "self-attention", "--ascii"),
    ("quiz", "--plain", "-n", "10", "--seed", "3"),
    ("paper", "--plain", "--seed", "3"),
    ("export", "anki", "{out}/deck.apkg"),
    ("lab", "bottleneck"),                      # until its first line of training
    ("lab", "transformer"),
]
_LAB_LOADING = "attn-tutor: loading"  # the lab's line while its kernels load (or compile)


def cold_command(cmd: list[str], args: tuple[str, ...]) -> float:
    """Seconds for one command on an empty numba cache and a fresh home (see 5. above)."""
    with tempfile.TemporaryDirectory(prefix="attn-cold-") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=f"{tmp}/numba", ATTN_TUTOR_HOME=f"{tmp}/home",
                   PYTHONUNBUFFERED="1")
        env.pop("ATTN_TUTOR_KERNELS", None)
        argv = cmd + [a.format(out=tmp) for a in args]
        t0 = time.perf_counter()
        if args[0] != "lab":
            subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=env, cwd=tmp, check=True)
            return time.perf_counter() - t0
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=env, cwd=tmp, text=True)
        try:
            for line in proc.stdout:
                if line.strip() and not line.startswith(_LAB_LOADING):
                    return time.perf_counter() - t0
            raise SystemExit(f"{' '.join(args)}: ended before its first line of training")
        finally:
            proc.kill()
            proc.wait()


def commands_table(cmd: list[str], runs: int) -> None:
    print(f"5. every command on an empty cache and a fresh home, median / max of {runs} "
          f"({load_line()} at its start):")
    for args in COLD_COMMANDS:
        times = [cold_command(cmd, args) for _ in range(runs)]
        shown = " ".join(a.replace("{out}/", "") for a in args)
        over = "  OVER 8 s" if args[0] == "lab" and max(times) > 8 else ""
        print(f"  attn-tutor {shown:<40} {statistics.median(times):6.2f} s  {max(times):6.2f} s"
              + over, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--feature-child", help=argparse.SUPPRESS)
    ap.add_argument("--commands", action="store_true",
                    help="only part 5: every CLI command on an empty cache")
    args = ap.parse_args()
    if args.child:
        child()
        return
    if args.feature_child:
        feature_child(args.feature_child)
        return

    cmd = cli()
    print(f"start-up benchmark; CLI = {' '.join(cmd)}; {cpu_model()}, {os.cpu_count()} cores; "
          f"{load_line()}")
    if bytecode_note():
        print(bytecode_note())
    if args.commands:
        commands_table(cmd, min(args.runs, 3))
        return
    med, best = wall(cmd + ["--help"], args.runs)
    print(f"1. attn-tutor --help:              median {med:.3f} s, min {best:.3f} s "
          f"(budget 0.3 s){'' if med <= 0.3 else '  OVER BUDGET'}")
    wall(cmd + ["trace", "qkv", "--json"], 1)
    med, best = wall(cmd + ["trace", "qkv", "--json"], args.runs)
    print(f"2. attn-tutor trace qkv --json:    median {med:.3f} s, min {best:.3f} s "
          f"(budget 0.3 s, warm){'' if med <= 0.3 else '  OVER BUDGET'}   ({load_line()})")

    print(f"\n3. the whole warm-up, one fresh process ({load_line()} at its start):")
    with tempfile.TemporaryDirectory(prefix="attn-numba-cache-") as cache:
        cold = run_child(cache, "--child")
        warm = run_child(cache, "--child")
    print(f"  {'area':<40} {'empty cache: wall':>18} {'CPU':>8} {'warm cache: wall':>17} {'CPU':>8}")
    warm_t = {name: (t, c) for name, t, c in warm["timings"]}
    totals = [0.0, 0.0, 0.0, 0.0]
    for name, t, c in cold["timings"]:
        w, wc = warm_t.get(name, (float("nan"), float("nan")))
        print(f"  {name:<40} {t:>17.3f}s {c:>7.3f}s {w:>16.3f}s {wc:>7.3f}s")
        if name not in cold["extra"]:
            for i, x in enumerate((t, c, w, wc)):
                totals[i] += x
    print(f"  {'the warm-up (numba and every area)':<40} {totals[0]:>17.3f}s {totals[1]:>7.3f}s "
          f"{totals[2]:>16.3f}s {totals[3]:>7.3f}s")
    print(f"  budgets: whole warm-up ≤ 25 s: {totals[0]:.1f} s"
          f"{'' if totals[0] <= 25 else '  OVER'}; a later start's load ≤ 1.5 s: {totals[2]:.2f} s"
          f"{'' if totals[2] <= 1.5 else '  OVER'}   ({load_line()})")

    print(f"\n4. a feature asked for 0.5 s after the warm-up starts, empty cache ({load_line()}):")
    for area in FEATURES:
        with tempfile.TemporaryDirectory(prefix="attn-numba-cache-") as cache:
            got = run_child(cache, "--feature-child", area)
        print(f"  {area:<24} waits {got['wait']:6.2f} s{'' if got['wait'] <= 8 else '  OVER 8 s'}",
              flush=True)
    print()
    commands_table(cmd, min(args.runs, 3))
    print(f"{load_line()} at the end")


if __name__ == "__main__":
    main()
