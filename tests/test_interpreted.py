"""Interpreted mode (engine._jit.use_interpreter): the same kernels run as plain Python.

A CLI process that only builds a worked example runs the kernels interpreted instead of
loading numba. These tests check that (1) the Python twins of the LLVM intrinsics keep the
intrinsics' contracts, (2) every trace prints the very same JSON in both modes, (3) the CLI
chooses the mode only where it should, and never imports numba when it does.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

from engine import _intrinsics_py as twin
from engine._intrinsics import _compact, _fmax, _gemm, _no_inline, _pow2_round, _view2d
from engine._jit import jit
from engine import traces
from engine.traces import SMALL_INPUTS, build, interpretable, list_traces
from tutor.render.catalog import trace_json

# --------------------------------------------------------------------------- the twins


@jit(cache=False)
def _pow2_compiled(t):
    return _pow2_round(t)


@jit(cache=False)
def _fmax_compiled(a, b):
    return _fmax(a, b)


@jit(cache=False)
def _gemm_compiled(A, B, C, trans_a, trans_b, alpha, beta):
    _gemm(A, B, C, trans_a, trans_b, alpha, beta)


@jit(cache=False)
def _view2d_compiled(flat, start, rows, cols):
    return _view2d(flat, start, rows, cols)


@jit(cache=False)
def _kept_apart(x):
    _no_inline()
    return 2.0 * x


@jit(cache=False)
def _calls_kept_apart(x):
    return _kept_apart(x) + 1.0


@jit(cache=False)
def _copy_compact(out, x):
    _compact()
    for i in range(out.shape[0]):
        out[i] = x[i]


@jit(cache=False)
def _copy_plain(out, x):
    _no_inline()
    for i in range(out.shape[0]):
        out[i] = x[i]


@pytest.mark.parametrize("dtype, magic, low", [(np.float32, 12582912.0, -127),
                                               (np.float64, 6755399441055744.0, -1023)])
def test_pow2_twin_is_two_to_the_rounded_k(dtype, magic, low):
    for v in np.arange(low, 64, 0.25):            # the kernels use v = x − max ≤ 0
        v = dtype(v)
        t = v + dtype(magic)
        k = int(np.rint(v))                       # the kernel's rounding (half to even)
        expected = 0.0 if k <= low else math.ldexp(1.0, k)
        got = twin._pow2_round(t)
        assert isinstance(got, dtype)
        assert float(got) == expected, (v, k)
        if k % 16 == 0:                           # and the intrinsic agrees bit for bit
            assert _pow2_compiled(t) == got


def test_fmax_twin_is_llvm_maxnum():
    for a, b in [(1.0, 2.0), (2.0, 1.0), (-np.inf, -3.0), (-3.0, -np.inf), (0.5, 0.5)]:
        assert twin._fmax(a, b) == max(a, b) == _fmax_compiled(a, b)
    # maxnum's NaN rule (the compiled one may assume no NaN: nnan): the other operand
    assert twin._fmax(float("nan"), 3.0) == 3.0
    assert twin._fmax(3.0, float("nan")) == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (0.5, 1.0), (2.0, -0.25)])
def test_gemm_twin_matches_the_formula_and_the_intrinsic(dtype, trans_a, trans_b, alpha, beta):
    rng = np.random.default_rng(3)
    m, k, n = 3, 5, 4
    A = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    B = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    C0 = rng.standard_normal((m, n)).astype(dtype)
    opA = A.T if trans_a else A
    opB = B.T if trans_b else B
    naive = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            naive[i, j] = alpha * sum(float(opA[i, p]) * float(opB[p, j]) for p in range(k))
            naive[i, j] += beta * float(C0[i, j])
    C_twin = C0.copy()
    if beta == 0:
        C_twin[0, 0] = np.nan                     # C is not read when beta = 0
    twin._gemm(A, B, C_twin, trans_a, trans_b, alpha, beta)
    C_comp = C0.copy()
    _gemm_compiled(A, B, C_comp, trans_a, trans_b, alpha, beta)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(C_twin, naive, rtol=tol, atol=tol)
    np.testing.assert_allclose(C_twin, C_comp, rtol=tol, atol=tol)
    assert C_twin.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_view2d_twin_and_intrinsic_are_views_of_the_slice(dtype):
    flat = np.arange(20, dtype=dtype)
    expected = np.array([[3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14]], dtype)  # by hand
    for view in (twin._view2d(flat, 3, 3, 4), _view2d_compiled(flat, 3, 3, 4)):
        assert view.shape == (3, 4) and view.dtype == dtype and view.flags.c_contiguous
        np.testing.assert_array_equal(view, expected)
        view[1, 2] = -1.0                         # a view: writes reach the flat vector
        assert flat[9] == -1.0
        flat[9] = 9.0
    kept = _view2d_compiled(np.arange(6.0), 2, 2, 2)  # the view keeps its base alive
    np.testing.assert_array_equal(kept, [[2.0, 3.0], [4.0, 5.0]])


def test_view2d_reads_a_3d_array_in_c_order():
    block = np.arange(24.0).reshape(4, 3, 2)             # (S+1, B, dA) as the annotations
    want = block[1:].reshape(9, 2)                       # what the kernels took before
    for view in (twin._view2d(block, 3 * 2, 9, 2), _view2d_compiled(block, 3 * 2, 9, 2)):
        np.testing.assert_array_equal(view, want)
        view[0, 1] = -5.0
        assert block[1, 0, 1] == -5.0
        block[1, 0, 1] = 7.0


def test_no_inline_keeps_the_function_out_of_its_callers():
    assert _calls_kept_apart(1.5) == 4.0
    twin._no_inline()                             # a no-op in Python
    ir = _kept_apart.inspect_llvm(_kept_apart.signatures[0])
    assert "noinline" in ir
    caller = _calls_kept_apart.inspect_llvm(_calls_kept_apart.signatures[0])
    body = re.search(r"define [^\n]*@_ZN\w*17_calls_kept_apart\w*\(.*?\n}\n", caller, re.S)
    assert re.search(r"call [^\n]*@_ZN\w*11_kept_apart", body.group())  # called, not folded in


def test_compact_keeps_the_loop_scalar_and_out_of_its_callers():
    x = np.arange(37.0)
    for copy in (_copy_compact, _copy_plain):
        out = np.zeros(37)
        copy(out, x)
        np.testing.assert_array_equal(out, x)
    twin._compact()                               # a no-op in Python

    def body(kernel, name):
        ir = kernel.inspect_llvm(kernel.signatures[0])
        return re.search(r"define [^\n]*@_ZN\w*" + name + r"\w*\(.*?\n}\n", ir, re.S).group()

    compact, plain = body(_copy_compact, "13_copy_compact"), body(_copy_plain, "11_copy_plain")
    attributes = _copy_compact.inspect_llvm(_copy_compact.signatures[0])
    assert "minsize" in attributes and "noinline" in attributes
    assert re.search(r"<\d+ x double>", plain)       # LLVM vectorises the plain copy
    assert not re.search(r"<\d+ x double>", compact)  # and leaves the compact one scalar


def test_next_task_twin_hands_out_each_task_once_across_threads():
    counter = np.zeros(1, np.int64)
    got: list[int] = []
    lock = threading.Lock()

    def worker():
        mine = [twin._next_task(counter) for _ in range(500)]
        with lock:
            got.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(2000)) and counter[0] == 2000


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
from engine._jit import use_interpreter
assert use_interpreter()
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
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    interpreted = json.loads(proc.stdout)
    for key, (name, overrides) in cases.items():
        compiled = trace_json(build(name, overrides), None)   # this process: numba kernels
        assert interpreted[key] == compiled, f"{key}: interpreted and compiled JSON differ"


# ------------------------------------------------------- generated problems, mark schemes, exports

_WORKED = """
import json, sys
from engine._jit import use_interpreter
assert use_interpreter()
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
    import os
    from pathlib import Path

    from tests.worked_examples import worked_examples

    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
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
sys.argv = ["attn-tutor", *sys.argv[1:]]
from tutor.cli import main
try:
    main(argv)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
import engine._jit as j
sys.stderr.write(f"\\nPROBE interpreted={j.interpreted()} numba={'numba' in sys.modules} code={code}\\n")
"""


def _probe(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", _CLI_PROBE, *args], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
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
    import engine._jit
    import tutor.commands.trace as trace_cmd
    import tutor.launch

    calls: list[str] = []
    monkeypatch.setattr(tutor.launch, "_own_process", True)
    monkeypatch.setattr(engine._jit, "use_interpreter", lambda: calls.append("x") or True)
    monkeypatch.setattr(trace_cmd, "_on_terminal", lambda: True)
    monkeypatch.setattr(trace_cmd, "show_interactive", lambda trace, overrides: calls.append("tui"))
    trace_cmd.run("qkv")
    assert calls == ["tui"]


def test_use_interpreter_is_refused_once_kernels_are_compiled():
    import engine.softmax  # noqa: F401 - defines compiled kernels in this process
    from engine._jit import interpreted, use_interpreter

    assert use_interpreter() is False and interpreted() is False
