"""What the start-up budgets keep out of a process (issue 35: warm `trace qkv --json` ≤ 0.3 s).

Timing lives in ``benchmarks/startup.py``; these tests hold the design that makes the time:
the console script builds only the command it runs (typer reads every annotation of every
command otherwise) and a worked example's trace imports its own builder, no other trace, and
neither Rich, Textual, numba nor SciPy. Each runs the console script's entry point in a fresh
process and reads ``sys.modules`` at its end.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

from engine.traces import list_traces
from tutor.cli import COMMANDS

_PROBE = """
import contextlib, io, json, sys
sys.argv = ["attn-tutor", *sys.argv[1:]]
from tutor.launch import main      # the console script
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _modules_after(*argv: str) -> tuple[set[str], str]:
    env = {k: v for k, v in os.environ.items() if k != "ATTN_TUTOR_KERNELS"}
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["code"] == 0, proc.stderr[-2000:]
    return set(got["modules"]), got["out"]


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_trace_json_loads_its_own_trace_and_command_only():
    modules, out = _modules_after("trace", "qkv", "--json")
    assert json.loads(out)["name"] == "qkv"
    assert not _top(modules) & {"textual", "numba", "llvmlite", "scipy", "rich", "platformdirs"}
    builders = {t.module for t in list_traces()}
    assert modules & builders == {"engine.traces.qkv"}
    assert {m for m in modules if m.startswith("tutor.commands.")} == {"tutor.commands.trace"}
    assert not {m for m in modules if m.startswith(("tutor.store", "tutor.content", "tutor.quiz"))}


def test_trace_plain_keeps_out_the_same():
    modules, out = _modules_after("trace", "scores", "--plain")
    assert "scores" in out.lower()
    assert not _top(modules) & {"textual", "numba", "scipy"}
    assert modules & {t.module for t in list_traces()} == {"engine.traces.scores"}


def test_help_lists_commands_without_the_engine():
    modules, out = _modules_after("--help")
    for name in COMMANDS:
        assert name in out, name
    assert not _top(modules) & {"numpy", "engine", "textual", "numba"}


def test_every_listed_command_module_is_named_as_the_table_names_it():
    for name, path in COMMANDS.items():
        assert importlib.import_module(path).NAME == name, path
