"""`attn-tutor lab scaling` / `lab saturation`: tiny sizes, JSON schema, text output, errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from engine.lab.scaling import plain_memory
from tutor.cli import app


def run(*args: str):
    return CliRunner().invoke(app, ["lab", *args], env={"COLUMNS": "100", "NO_COLOR": "1"})


SCALING = ("scaling", "--min-n", "16", "--max-n", "32", "--d", "8", "--repeat", "1")
SATURATION = ("saturation", "--max-d", "8", "--samples", "200", "--trials", "20")


def test_scaling_json_schema():
    r = run(*SCALING, "--json", "--seed", "5")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["schema"] == 2 and data["experiment"] == "scaling"
    assert (data["d"], data["dtype"], data["repeat"], data["seed"]) == (8, "float32", 1, 5)
    assert [p["n"] for p in data["points"]] == [16, 32]
    assert data["points"][1]["plain_bytes"] == plain_memory(32, 8) == (32 * 32 + 32 * 8) * 4 + 40 * 8
    assert set(data["points"][0]) == {"n", "plain_seconds", "tiled_seconds", "plain_bytes", "tiled_bytes"}
    # fewer than two points with n ≥ 1024: the fit uses all of them
    assert data["fit"]["n"] == [16, 32]
    assert data["fit"]["exponents"]["plain_bytes"] == pytest.approx(
        math.log2(plain_memory(32, 8) / plain_memory(16, 8)))
    assert data["interrupted"] is False and "stopped" not in data   # one word (schema 2)


def test_scaling_text_has_table_fit_and_plots():
    r = run(*SCALING)
    assert r.exit_code == 0, r.output
    out = r.stdout
    for text in ("plain vs tiled attention", "Fitted exponent", "time (ms) vs n, log-log",
                 "memory (MiB) vs n, log-log", "* plain", "o tiled"):
        assert text in out
    rows = [line for line in out.splitlines() if line.strip().startswith(("| 16 ", "| 32 "))]
    assert len(rows) == 2


def test_saturation_json_schema():
    r = run(*SATURATION, "--json", "--keys", "4")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["schema"] == 2 and data["experiment"] == "saturation"
    assert data["max_entropy"] == pytest.approx(math.log(4))
    assert [p["d_k"] for p in data["points"]] == [2, 4, 8]
    assert [p["var_exact"] for p in data["points"]] == [2.0, 4.0, 8.0]
    assert all(0 < p["entropy_unscaled"] <= math.log(4) for p in data["points"])
    assert data["interrupted"] is False and "stopped" not in data


def test_saturation_text():
    r = run(*SATURATION)
    assert r.exit_code == 0, r.output
    assert "Var MC" in r.stdout and "entropy (nats) vs d_k" in r.stdout and "* /sqrt(d_k)" in r.stdout  # piped: ASCII, like every lab command


@pytest.mark.parametrize(("args", "message"), [
    (("scaling", "--min-n", "64", "--max-n", "32"), "max_n: expected ≥ min_n = 64, got 32"),
    (("saturation", "--min-d", "16", "--max-d", "8"), "max_d: expected ≥ min_d = 16, got 8"),
])
def test_bad_ranges_are_one_line_errors(args, message):
    r = run(*args)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.strip() == f"attn-tutor: error: {message}"


def test_module_imports_only_typer():
    code = ("import sys, tutor.commands.lab; "
            "print([m for m in ('numpy', 'rich', 'numba', 'engine') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
