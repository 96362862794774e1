"""engine._jit: the only place fast-math flags are chosen."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine._jit import REDUCTION_FLAGS, jit


def test_fastmath_is_refused_outside_the_named_sets():
    with pytest.raises(TypeError, match="fma=True or reduction=True"):
        jit(lambda x: x, fastmath=True)


def test_named_sets_reach_numba_and_keep_inf_meaning():
    assert "ninf" not in REDUCTION_FLAGS and "fast" not in REDUCTION_FLAGS

    @jit(reduction=True, cache=False)
    def row_max(x):
        m = -np.inf
        for v in x:
            m = max(m, v)
        return m

    assert row_max.targetoptions["fastmath"] == set(REDUCTION_FLAGS)
    # a fully masked row (all −inf) must stay −inf, not be folded away
    assert row_max(np.full(5, -np.inf)) == -math.inf
    assert row_max(np.array([-np.inf, 2.0, -1.0])) == 2.0


# --------------------------------------------------------------------------- one import point

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _imports(path):
    """(line, module) of every import statement in a source file."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module
            for alias in node.names:            # `from pkg import submodule` imports it too
                yield node.lineno, f"{node.module}.{alias.name}"
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value


def test_numba_and_llvmlite_are_imported_only_by_engine_jit():
    """Two threads importing numba at once break its import (a first run of the TUI did):
    engine._jit imports it once, under a lock, and nothing in the product may import it
    another way."""
    found = []
    for folder in ("engine", "tutor"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "engine" / "_jit.py":
                continue
            for line, module in _imports(path):
                if module.partition(".")[0] in ("numba", "llvmlite"):
                    found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert found == []


def test_the_engines_modules_import_no_circle():
    """An import circle lets a second thread see a half-built module; the engine has none."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / "engine").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        graph[name] = {m for _, m in _imports(path) if m.startswith("engine.") or m == "engine"}
    # `from engine.seq2seq import _kernels` needs the submodule, not the package's other names:
    # a package's own __init__ importing its submodules is how a package is built
    graph = {k: {m for m in v if m in graph and m != k
                 and not (k.startswith(m + ".") and any(x.startswith(m + ".") for x in v))}
             for k, v in graph.items()}

    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle.extend(stack[stack.index(nxt):] + [node, nxt] if nxt in stack else [node, nxt])
                return True
            if state.get(nxt) is None and visit(nxt, stack + [node]):
                return True
        state[node] = 2
        return False

    assert not any(visit(n, []) for n in sorted(graph) if n not in state), cycle


def test_the_numba_import_lock_hands_every_thread_the_same_module():
    import threading

    from engine import _jit

    got = []
    barrier = threading.Barrier(4)

    def grab():
        barrier.wait()
        got.append(_jit.numba())

    threads = [threading.Thread(target=grab) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(m is got[0] for m in got) and hasattr(got[0], "njit")
    with pytest.raises(ValueError, match="numba or llvmlite"):
        _jit.load("os")


def test_the_llvm_intrinsics_serve_only_the_tiled_attention():
    """numba's internals sit behind one small module, used only where the lesson is speed."""
    users: dict[str, set[str]] = {"engine._intrinsics": set(), "engine._tiles": set()}
    for folder in ("engine", "tutor"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for _, module in _imports(path):
                if module in users:
                    users[module].add(name)
    assert users == {"engine._intrinsics": {"engine._tiles"},
                     "engine._tiles": {"engine.flash", "engine.flash_backward"}}
