"""Benchmark: start-up budget — CLI start, warm-cache trace, numba compile and cache load.

Run: ``python benchmarks/startup.py`` (``--runs 7``). Every number is the wall time of a fresh
process (or of one step inside a fresh process), median of ``--runs`` unless noted:

1. ``attn-tutor --help``                    budget 0.3 s (imports neither numba nor textual)
2. ``attn-tutor trace qkv --json``          budget 0.6 s (issue 17), caches warm (one run first);
   the worked example runs interpreted, so numba is not loaded (engine._jit)
3. every engine kernel compiled from an empty cache: a child process with ``NUMBA_CACHE_DIR``
   pointing at a new temporary directory imports numba, then makes the tiny calls of
   ``tutor/warmup.py`` (what the TUI warms) plus the kernels that list leaves out, timing
   each (import of the module + first call) in wall and CPU seconds of the child (steps
   marked "on request", e.g. float64 tiled attention, which only ``lab scaling --dtype
   float64`` compiles, are shown but left out of the total); then the
   same child again on the now-filled cache, which is the cached load a user pays on every
   later start. One run each.
4. the first run a student feels: the TUI's cold-cache warm-up (``tutor/warmup_procs.py``) on
   another empty cache — two child processes sharing the warm-up list (``prepare_engine``), this
   process loading each area as soon as a child is through it — as wall time until every warm-up kernel is in, and its
   CPU time (each child's and the loading process's). One run; compare it with the
   warm-up list's rows of (3), which are the same work in one process.

5. every command a student can run without the TUI, each on its own empty numba cache and
   fresh ``ATTN_TUTOR_HOME`` (the first time a student runs it): wall seconds to exit, stdin
   from /dev/null (a line-based quiz or paper then asks its first question and ends), and for
   the two labs the wait until their first line of training (the process is then stopped).
   Median and max of ``min(--runs, 3)`` runs. ``--commands`` prints only this part.

``--solo`` instead times each warm-up area alone (a fresh process, its own empty cache) and
prints the ``COLD_SECONDS`` table of ``tutor/warmup.py`` that balances the two children:
re-run it when an area's compile time changes.

The CLI is the ``attn-tutor`` script next to this Python (``python -m tutor`` if there is
none). The machine's load average is printed with the results: on a shared machine, run it
twice and keep the quieter run.
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
ON_REQUEST = " (on request)"  # compiled only when a student asks for it: not in the total


def _extra_calls():
    """Kernels that tutor/warmup.py's list does not reach (or reaches in another dtype)."""
    import importlib

    import numpy as np

    def call(module, name, *args, **kwargs):
        return lambda: getattr(importlib.import_module(module), name)(*args, **kwargs)

    x32 = np.ones((4, 3), np.float32)
    big = np.ones((128, 16), np.float32)  # L·S·d_k = 2¹⁸: the BLAS kernels
    return [
        ("tiled attention float64" + ON_REQUEST, call("engine.flash", "flash_attention",
                                                     x32.astype(np.float64), x32, x32)),
        ("tiled attention causal+pad", call("engine.flash", "flash_attention", x32, x32, x32,
                                            causal=True, key_padding=np.ones(4, bool))),
        ("tiled attention backward float32", call("engine.flash_backward",
                                                  "flash_attention_backward", x32, x32, x32, x32)),
        ("attention backward, BLAS path", call("engine.attention_backward", "attention_backward",
                                               big, big, big, None, big)),
        ("positional", call("engine.positional", "sinusoidal_encoding", 4, 6)),
        ("beam candidates", call("engine.decoding", "top_candidates",
                                 np.zeros(2), np.log(np.full((2, 5), 0.2)), 3)),
        ("seq2seq step model (no tutor feature)", _seq2seq_step_model),
    ]


def _seq2seq_step_model():
    """engine.seq2seq.step_function: the trained model as a step model for engine.decoding."""
    import numpy as np

    from engine.seq2seq import Seq2Seq, Seq2SeqConfig, step_function

    model = Seq2Seq.init(Seq2SeqConfig(embed_dim=2, hidden_dim=2, attn_dim=2), seed=0)
    sm = step_function(model, np.array([3, 4, 2]))
    return sm.step(sm.initial_state, sm.bos_token)


def child() -> None:
    """In a fresh process: time `import numba`, then each warm-up call; print JSON."""
    sys.path.insert(0, str(ROOT))
    t0, c0 = time.perf_counter(), time.process_time()
    import numba
    import numba.core.registry  # noqa: F401 - what the first @jit would import anyway

    timings = [("import numba", time.perf_counter() - t0, time.process_time() - c0)]
    from tutor.warmup import _tiny_calls

    for name, fn in _tiny_calls() + _extra_calls():
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - report, do not stop the benchmark
            name += f" (failed: {type(exc).__name__}: {exc})"
        timings.append((name, time.perf_counter() - t0, time.process_time() - c0))
    # jitted functions in loaded engine modules that none of the calls compiled
    from numba.core.dispatcher import Dispatcher

    missed = sorted(
        f"{mod_name}.{attr}" for mod_name, mod in list(sys.modules.items())
        if mod_name.startswith("engine") and mod is not None
        for attr, obj in vars(mod).items()
        if isinstance(obj, Dispatcher) and obj.__module__ == mod_name and not obj.signatures)
    print(json.dumps({"timings": timings, "missed": missed, "layer": _layer(numba)}))


def two_process_child() -> None:
    """In a fresh process: what the TUI does on a cold cache (``prepare_engine``: children,
    areas loaded here behind them, then the in-process pass), timed; print JSON."""
    import resource

    sys.path.insert(0, str(ROOT))
    from tutor.warmup import _tiny_calls
    from tutor.warmup_procs import prepare_engine

    names = [name for name, _ in _tiny_calls()]
    kept = []
    t0, c0 = time.perf_counter(), time.process_time()
    prepare_engine(cold=lambda: True, on_children=kept.append)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    children = kept[0]
    ok = children.wait()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = [[n for n in names if children.owner.get(n) == i] for i in range(len(children.parts))]
    last = max(children.through_at.values(), default=0.0)  # the children's last area through
    print(json.dumps({"ok": ok, "parts": took, "through_at": children.through_at,
                      "children_wall": last, "children_cpu": children.cpu_seconds,
                      "children_rusage_cpu": used.ru_utime + used.ru_stime,
                      "load_wall": wall - last, "load_cpu": cpu}))


def solo_child(name: str) -> None:
    """In a fresh process: the CPU seconds of the one warm-up area ``name``; print JSON."""
    sys.path.insert(0, str(ROOT))
    import numba.core.registry  # noqa: F401 - not the area's cost

    from tutor import warmup

    warmup.ISOLATED = True  # as in a warm-up child: nothing else runs here
    c0 = time.process_time()
    dict(warmup._tiny_calls())[name]()
    print(json.dumps({"cpu": time.process_time() - c0}))


def solo_table() -> None:
    """Time every warm-up area alone on an empty cache; print the COLD_SECONDS table."""
    sys.path.insert(0, str(ROOT))
    from tutor.warmup import RIDES_WITH, _tiny_calls

    load = os.getloadavg()
    print(f"# each area alone on an empty numba cache, CPU seconds; {cpu_model()}, "
          f"load average {load[0]:.2f} at the start")
    rows = []
    for name, _ in _tiny_calls():
        if name in RIDES_WITH:
            continue
        with tempfile.TemporaryDirectory(prefix="attn-numba-cache-") as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            proc = subprocess.run([sys.executable, __file__, "--solo-child", name],
                                  capture_output=True, text=True, env=env, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed:\n{proc.stderr}")
        rows.append(f'"{name}": {json.loads(proc.stdout.strip().splitlines()[-1])["cpu"]:.1f}')
    print("COLD_SECONDS: dict[str, float] = {\n    " + ", ".join(rows) + ",\n}")


def _layer(numba) -> str:
    try:
        return numba.threading_layer()
    except ValueError:
        return "not started"


def run_child(cache_dir: str, mode: str = "--child") -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    proc = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True,
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
    ("quiz", "--plain", "-m", "mock", "--seed", "3"),
    ("paper", "--plain", "--seed", "3"),
    ("export", "anki", "{out}/deck.apkg"),
    ("export", "markdown", "{out}/notes.md"),
    ("export", "csv", "{out}/cards.csv"),
    ("lab", "bottleneck"),                      # until its first line of training
    ("lab", "transformer"),
]
_LAB_LOADING = "attn-tutor: loading"  # the lab's line while its kernels load (or compile)


def cold_command(cmd: list[str], args: tuple[str, ...]) -> float:
    """Seconds for one command on an empty numba cache and a fresh home (see 5. above)."""
    with tempfile.TemporaryDirectory(prefix="attn-cold-") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=f"{tmp}/numba", ATTN_TUTOR_HOME=f"{tmp}/home",
                   PYTHONUNBUFFERED="1")
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
    load = os.getloadavg()
    print(f"every command on an empty cache and a fresh home, median / max of {runs} "
          f"(load average {load[0]:.2f} at its start):")
    for args in COLD_COMMANDS:
        times = [cold_command(cmd, args) for _ in range(runs)]
        shown = " ".join(a.replace("{out}/", "") for a in args)
        print(f"  attn-tutor {shown:<40} {statistics.median(times):6.2f} s  {max(times):6.2f} s"
              + ("  OVER 5 s" if max(times) > 5 else ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--two-process-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--solo", action="store_true",
                    help="time each warm-up area alone; print tutor/warmup.py's COLD_SECONDS")
    ap.add_argument("--solo-child", help=argparse.SUPPRESS)
    ap.add_argument("--commands", action="store_true",
                    help="only part 5: every CLI command on an empty cache")
    args = ap.parse_args()
    if args.solo_child:
        solo_child(args.solo_child)
        return
    if args.solo:
        solo_table()
        return
    if args.child:
        child()
        return
    if args.two_process_child:
        two_process_child()
        return

    load0 = os.getloadavg()
    cmd = cli()
    print(f"start-up benchmark; CLI = {' '.join(cmd)}; {cpu_model()}, {os.cpu_count()} cores; "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    if bytecode_note():
        print(bytecode_note())
    if args.commands:
        commands_table(cmd, min(args.runs, 3))
        return
    med, best = wall(cmd + ["--help"], args.runs)
    print(f"attn-tutor --help:              median {med:.3f} s, min {best:.3f} s "
          f"(budget 0.3 s){'' if med < 0.3 else '  OVER BUDGET'}")
    wall(cmd + ["trace", "qkv", "--json"], 1)  # fill the numba cache if it is cold
    med, best = wall(cmd + ["trace", "qkv", "--json"], args.runs)
    print(f"attn-tutor trace qkv --json:    median {med:.3f} s, min {best:.3f} s "
          f"(budget 0.6 s, warm caches){'' if med < 0.6 else '  OVER BUDGET'}")

    with tempfile.TemporaryDirectory(prefix="attn-numba-cache-") as cache:
        cold = run_child(cache)
        warm = run_child(cache)
    with tempfile.TemporaryDirectory(prefix="attn-numba-cache-") as cache:
        load_two = os.getloadavg()
        two = run_child(cache, "--two-process-child")
    print()
    print(f"engine kernels, one fresh process each (threading layer: {cold['layer']}):")
    print(f"  {'step':<36} {'empty cache: wall':>18} {'CPU':>8} {'warm cache: wall':>17} {'CPU':>8}")
    warm_t = {name: (t, c) for name, t, c in warm["timings"]}
    totals = [0.0, 0.0, 0.0, 0.0]
    for name, t, c in cold["timings"]:
        w, wc = warm_t.get(name, (float("nan"), float("nan")))
        print(f"  {name:<36} {t:>17.3f}s {c:>7.3f}s {w:>16.3f}s {wc:>7.3f}s")
        if name != "import numba" and not name.endswith(ON_REQUEST):
            for i, x in enumerate((t, c, w, wc)):
                totals[i] += x
    print(f"  {'total after import numba':<36} {totals[0]:>17.3f}s {totals[1]:>7.3f}s "
          f"{totals[2]:>16.3f}s {totals[3]:>7.3f}s")
    if cold["missed"]:
        print("  jitted functions none of these calls compiled: " + ", ".join(cold["missed"]))
    from tutor.warmup import _tiny_calls

    listed = {name for name, _ in _tiny_calls()}
    one = [(t, c) for name, t, c in cold["timings"] if name in listed]
    print()
    print(f"first run as the TUI does it (load average {load_two[0]:.2f} at its start):")
    print(f"  the warm-up list in one process (the rows above): wall {sum(t for t, _ in one):.1f} s, "
          f"CPU {sum(c for _, c in one):.1f} s")
    cpu = sum(two["children_cpu"]) + two["load_cpu"]
    print(f"  two child processes, areas loaded here as they finish: wall "
          f"{two['children_wall'] + two['load_wall']:.1f} s until every warm-up kernel is in "
          f"(the children's last area {two['children_wall']:.1f} s, then {two['load_wall']:.1f} s "
          f"more here), CPU {cpu:.1f} s (children "
          + " + ".join(f"{c:.1f}" for c in two["children_cpu"])
          + f" s, this process {two['load_cpu']:.1f} s, most of it loading areas behind them)"
          + ("" if two["ok"] else "  A CHILD FAILED"))
    at = two["through_at"]
    for i, part in enumerate(two["parts"]):
        print(f"    child {i + 1}: " + ", ".join(f"{n} ({at[n]:.1f} s)" if n in at else n
                                         for n in part))
    print()
    commands_table(cmd, min(args.runs, 3))
    load1 = os.getloadavg()
    print(f"load average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")


if __name__ == "__main__":
    main()
