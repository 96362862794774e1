"""``attn-tutor trace``: listing, the four output formats, --set/--file, and one-line errors."""

from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys

import pytest
from rich.console import Console
from typer.testing import CliRunner

from engine.traces import REGISTRY, build
from tutor.cli import app

ANSI = re.compile(r"\x1b\[")
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["trace", *args])


def test_listing_shows_every_trace_with_its_section():
    result = run()
    assert result.exit_code == 0
    for name, info in REGISTRY.items():
        assert re.search(rf"sec {info.section}\s+{re.escape(name)}\s", result.stdout), name
    assert result.stdout.isascii()


def test_listing_as_json():
    data = json.loads(run("--json").stdout)
    assert sorted(d["name"] for d in data) == sorted(REGISTRY)
    assert [d["section"] for d in data] == sorted(d["section"] for d in data)  # lecture order
    assert len(data) == 29 and set(data[0]) == {"name", "section", "title", "description"}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_plain_output_is_ascii_without_escapes(name):
    result = run(name, "--plain")
    assert result.exit_code == 0, result.stderr
    assert not ANSI.search(result.stdout)
    assert result.stdout.isascii()
    assert "Step 1 of" in result.stdout and "Check: the step-by-step values agree" in result.stdout


def test_off_a_terminal_plain_is_the_default():
    assert run("qkv").stdout == run("qkv", "--plain").stdout


def test_qkv_plain_shows_the_numbers_and_errata():
    out = run("qkv", "--plain").stdout
    assert "alpha_1 = 1.7813 / 3.7813 = 0.4711" in out
    assert "Printed:  alpha_1 = 0.64" in out
    assert "sqrt(d_k) = sqrt(3) = 1.7321" in out


def test_json_schema():
    data = json.loads(run("qkv", "--json").stdout)
    assert data["schema"] == 1 and data["name"] == "qkv" and data["section"] == 5
    assert {"title", "inputs", "steps", "result", "errata", "fused", "agrees"} <= set(data)
    assert data["inputs"]["W_V"] == [[1, 0], [0, 1], [0, 0], [0, 0]]
    e1 = math.exp(1 / math.sqrt(3))
    assert data["result"]["weights"] == pytest.approx([e1 / (e1 + 2), 1 / (e1 + 2), 1 / (e1 + 2)])
    assert data["errata"][0]["printed"].startswith("α₁ = 0.64")


def test_json_single_step():
    data = json.loads(run("qkv", "--json", "--step", "6").stdout)
    assert [s["index"] for s in data["steps"]] == [6]
    assert data["steps"][0]["title"] == "Softmax"


def test_json_encodes_minus_infinity_as_a_string():
    data = json.loads(run("masking", "--json").stdout)
    masked = data["steps"][3]["values"]["masked_scores"]
    assert masked[0][1] == "-inf"


def test_markdown():
    out = run("pooling", "--markdown").stdout
    assert out.startswith("# Max, mean and attention pooling (`pooling`, lecture §9)")
    assert "## Step 3. Attention pooling" in out and "## Errata" in out
    assert "| `attention` | `9.5` |" in out


@pytest.mark.parametrize("name", ["cross-entropy", "beam-search", "masking", "greedy-vs-beam"])
def test_markdown_keeps_tokens_in_angle_brackets_visible(name):
    """Outside code, <EOS>, </s> and <pad> are HTML tags to a Markdown viewer and vanish."""
    import re

    out = run(name, "--markdown").stdout
    prose = re.sub(r"```.*?```", "", out, flags=re.S)  # fenced formulas are code
    prose = re.sub(r"`[^`\n]*`", "", prose)  # and so are code spans
    assert not re.search(r"</?[A-Za-z][^>\s]*>", prose.replace("<br>", "")), name
    assert "&lt;" in prose


def test_plain_single_step():
    out = run("cross-entropy", "--plain", "--step", "2").stdout
    assert out.startswith("Step 2 of 6: Loss at step 1") and "L_1 = -ln 0.6 = 0.5108" in out
    assert "Step 3" not in out


def test_set_changes_the_result_and_drops_notes_errata():
    data = json.loads(run("qkv", "--json", "--set", "W_V=0,1; 1,0; 0,0; 0,0").stdout)
    e1 = math.exp(1 / math.sqrt(3))
    assert data["result"]["output"] == pytest.approx([1 / (e1 + 2), e1 / (e1 + 2)])
    assert data["errata"] == [] and data["source"] == "user"
    json_matrix = json.loads(run("qkv", "--json", "--set", "W_V=[[0,1],[1,0],[0,0],[0,0]]").stdout)
    assert json_matrix["result"] == data["result"]


def test_file_inputs(tmp_path):
    f = tmp_path / "inputs.toml"
    f.write_text('Q = [1, 0, -1]\nK = [0, 1, 1]\n')
    data = json.loads(run("scoring-compare", "--json", "--file", str(f)).stdout)
    assert data["result"]["dot"] == -1
    assert data["result"]["scaled"] == pytest.approx(-1 / math.sqrt(3))


def test_output_file(tmp_path):
    out = tmp_path / "qkv.md"
    result = run("qkv", "-o", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    assert out.read_text().startswith("# Q, K, V")
    assert f"wrote {out}" in result.stderr


def test_inputs_listing():
    out = run("qkv", "--inputs").stdout
    assert "W_V: a matrix of shape (d, d_v); value projection" in out
    assert "position: a whole number >= 1" in out
    assert "      default 1, 0; 0, 1; 0, 0; 0, 0\n" in out  # as --set reads it, not "[1  0]; [0  1]"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_listed_default_pastes_back_into_set(name):
    """`--inputs` shows each default in --set syntax: pasting it back changes nothing."""
    import numpy as np

    from engine.traces import input_specs
    from tutor.inputs import parse_value

    out = run(name, "--inputs").stdout
    assert out.isascii()
    shown = dict(re.findall(r"^  (\S+): .*\n      default (.*)$", out, re.M))
    for spec in input_specs(name):
        if spec.default is None:
            continue
        back = spec.coerce(parse_value(shown[spec.name], f"input {spec.name}"))
        default = spec.coerce(spec.default)
        if isinstance(default, np.ndarray):  # six significant digits, like the TUI's form
            assert back.shape == default.shape and np.allclose(back, default, rtol=1e-6), spec.name
        else:
            assert back == default, spec.name


@pytest.mark.parametrize("args, message", [
    (["nope"], "no trace 'nope'. Run `attn-tutor trace` to list them."),
    (["qvk"], "no trace 'qvk'. Did you mean 'qkv'? Run `attn-tutor trace` to list them."),
    (["qkv", "--set", "nope=1"],
     "input nope: no such input; this trace takes tokens, X, W_Q, W_K, W_V, position"),
    (["qkv", "--set", "W_V=1,2"], "input W_V: got a vector of 2 numbers, expected a matrix of "
                                  "shape (d, d_v); separate the rows with ';'"),
    (["qkv", "--set", "W_V=[[0,1],[1,0],[0,0],[0]]"], "input W_V: got rows of different lengths "
     "(2, 2, 2, 1), expected a matrix of shape (d, d_v) with every row the same length"),
    (["qkv", "--set", "W_V=true"], "input W_V: got true, expected a matrix of shape (d, d_v)"),
    (["qkv", "--set", "position=true"], "input position: got true, expected a whole number >= 1"),
    (["scores", "--set", "Q=abc"], "input Q: got 'abc', expected a vector of shape (d_k,) of numbers"),
    (["qkv", "--set", "X=1,a; 2,3"], "input X: got 'a', expected a number"),
    (["scores", "--set", "Q=1,2,3"],
     "input Q: has d_k = 3 (shape (3,)), but K has d_k = 2; expected shape (d_k,) with the same d_k"),
    (["top-k", "--set", "k=2.5"], "input k: got 2.5, expected a whole number >= 1"),
    (["nucleus", "--set", "p=1.5"], "input p: got 1.5, expected a number in (0, 1]"),
    (["qkv", "--set", "position=4"], "input position: got 4, expected a whole number from 1 to 3"),
    (["qkv", "--set", "W_V"], "--set 'W_V': expected NAME=VALUE, for example --set Q='1,0,-1'"),
    (["qkv", "--step", "99"], "--step 99: trace qkv has 7 steps; expected a number from 1 to 7"),
    (["qkv", "--plain", "--json"], "choose one of --plain, --json and --markdown, not --plain and --json"),
    (["--set", "Q=1"], "name a trace to use --set, --file, --step or --inputs"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith("attn-tutor: error: " + message)


def test_on_a_terminal_the_tui_opens_on_the_same_inputs(monkeypatch):
    import tutor.commands.trace as cmd

    seen = []
    monkeypatch.setattr(cmd, "_on_terminal", lambda: True)
    monkeypatch.setattr(cmd, "show_interactive", lambda trace, overrides: seen.append((trace.name, overrides)))
    assert run("qkv", "--set", "position=3").exit_code == 0
    assert seen == [("qkv", {"position": 3.0})]


def test_command_module_imports_only_typer():
    code = ("import sys\nimport tutor.commands.trace\n"
            "print(sorted(m for m in ('numpy', 'numba', 'rich', 'engine') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] in ("[]", "['rich']")  # typer may pull in rich


def test_a_stack_of_matrices_is_labelled_matrix_by_matrix():
    """multi-head's result read "weights = [0]" (the index of the first head), like a value."""
    from tutor.render.text import value_lines

    assert value_lines([[[1, 0], [0, 1]], [[0.5, 0.5], [0.25, 0.75]]]) == [
        "matrix 1 of 2:", "  [1  0]", "  [0  1]",
        "matrix 2 of 2:", "  [ 0.5   0.5]", "  [0.25  0.75]"]
    out = run("multi-head", "--plain").stdout
    assert "  weights = matrix 1 of 2:\n" in out and "weights = [0]" not in out
