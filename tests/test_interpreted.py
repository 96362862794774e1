"""Interpreted mode (``ATTN_TUTOR_KERNELS=python``, read once by engine._jit): the same kernels
run as plain Python.

A CLI process that only builds a worked example runs the kernels interpreted instead of
loading numba. These tests check that (1) every trace prints the very same JSON in both
modes, (2) the console script chooses the mode only where it should, once, before anything
imports the engine, and never imports numba when it does.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from engine import traces
from engine._jit import KERNELS_VARIABLE
from engine.traces import SMALL_INPUTS, build, interpretable, list_traces
from tutor.render.catalog import trace_json

INTERPRETED_ENV = {**os.environ, KERNELS_VARIABLE: "python"}

# --------------------------------------------------------------------------- same JSON in both modes

_CUSTOM = {  # small student inputs (within SMALL_INPUTS) that take other paths than the defaults
    "self-attention": {"tokens": ["a", "b", "c", "d", "e"],
                       "X": np.round(np.random.default_rng(1).standard_normal((5, 6)), 2).tolist(),
                       "W_Q": np.eye(6)[:, :4].tolist(), "W_K": np.eye(6)[::-1, :4].tolist(),
                       "W_V": np.ones((6, 3)).tolist()},
    "multi-head": {"d_model": 8, "heads": 4, "seed": 11},
    "masking": {"length": 1},
    "training-step": {"d_h": 6, "seed": 3},
    "teacher-forcing": {"d_h": 5, "train_steps": 12},
    "beam-search": {"beam_width": 3},
}

_INTERPRETED_BUILD = """
import json, sys
from engine._jit import interpreted
assert interpreted()
from engine.traces import build
from tutor.render.catalog import trace_json
cases = json.loads(sys.stdin.read())
out = {key: trace_json(build(name, overrides), None) for key, (name, overrides) in cases.items()}
assert "numba" not in sys.modules, "interpreted mode imported numba"
print(json.dumps(out))
"""


def test_every_trace_prints_the_same_json_interpreted_and_compiled():
    names = [t.name for t in list_traces() if interpretable(t.name)]
    assert "scaling" not in names and len(names) == len(list_traces()) - 1
    cases = {name: (name, {}) for name in names}
    cases.update({f"{name} (custom)": (name, o) for name, o in _CUSTOM.items()})
    for name, overrides in cases.values():
        assert interpretable(name, overrides), name
    proc = subprocess.run([sys.executable, "-c", _INTERPRETED_BUILD], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=600, env=INTERPRETED_ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    interpreted = json.loads(proc.stdout)
    for key, (name, overrides) in cases.items():
        compiled = trace_json(build(name, overrides), None)   # this process: numba kernels
        assert interpreted[key] == compiled, f"{key}: interpreted and compiled JSON differ"


# ------------------------------------------------------- generated problems, mark schemes, exports

_WORKED = """
import json, sys
from engine._jit import interpreted
assert interpreted()
from tests.worked_examples import worked_examples
json.dump(worked_examples(), sys.stdout)
assert "numba" not in sys.modules, "interpreted mode imported numba"
"""


def _close(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def test_generated_problems_and_mark_schemes_agree_interpreted_and_compiled():
    """The line-based quiz and paper run interpreted: a student must read the same numbers and
    be marked against the same answers as in the TUI (compiled). Text is compared exactly,
    answers to rounding (a kernel that allows FMA may differ in the last bit)."""
    from pathlib import Path

    from tests.worked_examples import worked_examples

    root = str(Path(__file__).resolve().parents[1])
    env = {**INTERPRETED_ENV, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", _WORKED], capture_output=True, text=True,
                          timeout=600, env=env, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    interpreted = json.loads(proc.stdout)
    compiled = json.loads(json.dumps(worked_examples()))   # this process: numba kernels
    assert len(compiled) > 100 and interpreted.keys() == compiled.keys()
    for key in compiled:
        assert interpreted[key]["text"] == compiled[key]["text"], f"{key}: the text differs"
        assert _close(interpreted[key]["answers"], compiled[key]["answers"]), f"{key}: answers differ"


def test_exports_are_the_same_interpreted_and_compiled(tmp_path):
    """`attn-tutor export` runs interpreted; its files must match what compiled kernels write."""
    from tutor.exam.export import export

    for fmt, ext in (("markdown", "md"), ("csv", "csv")):
        mine = tmp_path / f"compiled.{ext}"
        export(fmt, mine)                                   # this process: compiled kernels
        theirs = tmp_path / f"interpreted.{ext}"
        assert _probe("export", fmt, str(theirs)) == "PROBE interpreted=True numba=False code=0"
        assert theirs.read_bytes() == mine.read_bytes(), f"{fmt}: the exports differ"


# --------------------------------------------------------------------------- when the CLI chooses it

_CLI_PROBE = """
import sys
argv = sys.argv[2:] if sys.argv[1] == "--argv" else None
sys.argv = ["attn-tutor", *(argv or sys.argv[1:])]
if argv is None:
    from tutor.launch import main      # the console script
else:
    from tutor.cli import main as cli_main
    main = lambda: cli_main(argv)      # a program calling main(argv) in its own process
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
import engine._jit as j
sys.stderr.write(f"\\nPROBE interpreted={j.interpreted()} numba={'numba' in sys.modules} code={code}\\n")
"""


def _probe(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != KERNELS_VARIABLE}
    proc = subprocess.run([sys.executable, "-c", _CLI_PROBE, *args], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL, env=env)
    return proc.stderr.strip().splitlines()[-1]


def test_cli_trace_and_heatmap_run_worked_examples_without_numba():
    assert _probe("trace", "qkv", "--json") == "PROBE interpreted=True numba=False code=0"
    assert _probe("trace", "qkv", "--plain", "--set", "tokens=you love dogs") == \
        "PROBE interpreted=True numba=False code=0"
    assert _probe("heatmap", "self-attention", "--ascii") == "PROBE interpreted=True numba=False code=0"


def test_the_heatmap_listing_runs_without_numba():
    """The listing built every trace on its defaults, compiled: 7-8 s on an empty cache."""
    assert _probe("heatmap") == "PROBE interpreted=True numba=False code=0"


@pytest.mark.parametrize("name", sorted(traces._LISTING_INPUTS))
def test_a_trace_built_for_listing_draws_what_its_defaults_draw(name):
    """The listing shows each heatmap's title and shape; the cheap inputs must not change them."""
    def drawn(trace):
        return [(m.title, m.kind, list(m.row_labels), list(m.col_labels), np.shape(m.weights))
                for m in trace.heatmaps]

    cheap = traces.build_for_listing(name)
    assert cheap.heatmaps and drawn(cheap) == drawn(build(name))


def test_quiz_paper_and_export_run_without_numba_line_based(tmp_path):
    for args in (("quiz", "--plain", "-n", "10", "--seed", "3"),
                 ("quiz", "--plain", "-m", "mock", "--seed", "3"),
                 ("paper", "--plain", "--seed", "3"),
                 ("export", "anki", str(tmp_path / "deck.apkg"))):
        assert _probe(*args) == "PROBE interpreted=True numba=False code=0", args


def test_main_with_argv_keeps_compiled_kernels():
    """tests and programs calling main(argv) in their own process keep compiled kernels."""
    assert _probe("--argv", "trace", "qkv", "--json").startswith("PROBE interpreted=False")


def test_cli_compiles_the_big_ones():
    assert _probe("trace", "scaling", "--step", "1", "--plain").startswith("PROBE interpreted=False")
    big = "; ".join(", ".join(["0.5"] * 16) for _ in range(16))        # 16 × 16 = 256 numbers
    assert _probe("trace", "self-attention", "--json", "--set", f"X={big}",
                  "--set", "tokens=" + " ".join("w" * (i + 1) for i in range(16))).startswith(
        "PROBE interpreted=False")


def test_the_size_rule():
    assert interpretable("qkv") and interpretable("qkv", {})
    assert not interpretable("scaling")
    assert not interpretable("SCALING".lower(), {})
    # lists count their elements, words count one each, whole numbers their value, seeds 1
    at_limit = {"X": [[1.0] * 10] * 20, "tokens": "a b c", "d_k": 50.0, "seed": 10 ** 6,
                "scale": 0.5}                  # 200 + 3 + 50 + 1 + 1 = 255
    assert interpretable("qkv", at_limit)
    assert interpretable("qkv", {**at_limit, "extra": 1.0})        # 256 = SMALL_INPUTS
    assert not interpretable("qkv", {**at_limit, "extra": 2.0})    # 257
    assert SMALL_INPUTS == 256


def test_the_tui_path_keeps_compiled_kernels(monkeypatch):
    """`attn-tutor trace NAME` on a terminal opens the full-screen tutor, whose lab needs
    machine code: the console script must not choose interpreted mode for it."""
    import typer.main

    from tutor.cli import app
    from tutor.runmode import worked_examples_only

    command = typer.main.get_command(app)
    monkeypatch.setattr("tutor.runmode._stdout_is_terminal", lambda: True)
    assert not worked_examples_only(["trace", "qkv"], command)
    assert worked_examples_only(["trace", "qkv", "--plain"], command)
    assert worked_examples_only(["trace", "qkv", "--step", "2"], command)
    monkeypatch.setattr("tutor.runmode._stdout_is_terminal", lambda: False)
    assert worked_examples_only(["trace", "qkv"], command)
    assert not worked_examples_only(["lab", "bottleneck"], command) and not worked_examples_only([], command)


def test_the_mode_is_read_once_at_import():
    """The mode cannot change under a running process: engine._jit has no switch, only the
    variable it reads when imported."""
    import engine._jit

    assert not hasattr(engine._jit, "use_interpreter")
    assert engine._jit.interpreted() is False
