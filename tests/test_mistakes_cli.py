"""``attn-tutor trace NAME --check VALUE=NUMBERS``: marks and diagnoses typed numbers; the
JSON schema of tutor/schemas/trace-json.md; bad checks are one line and exit 2."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from tutor.cli import app
from tutor.typed import parse_check, read_typed, typed_decimals

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["trace", *args])


def test_the_issues_example_names_no_scale_and_the_root():
    result = run("scoring-compare", "--check", "scaled=1")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.isascii()
    assert "you gave 1; the answer is 0.5774" in out
    assert "(no-scale)" in out and "sqrt(3)" in out


def test_the_notes_slip_is_named_and_a_right_value_is_correct():
    result = run("qkv", "--check", "weights=0.64,0.18,0.18", "--check", "scores=0.577,0,0")
    assert result.exit_code == 0
    assert "softmax-term-dropped" in result.stdout
    assert "[ok] scores" in result.stdout and "Correct." in result.stdout


def test_json_lists_given_expected_correct_and_diagnoses():
    result = run("qkv", "--check", "weights=0.64,0.18,0.18", "--check", "output=0.47,0.26",
                 "--check", "scores=0.1,0.2,0.3", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["schema"] == 1 and data["trace"] == "qkv"
    wrong, right, unknown = data["checks"]
    assert set(wrong) == {"name", "given", "expected", "correct", "imprecise", "verdict",
                          "diagnoses", "follow_up"}
    assert wrong["given"] == [0.64, 0.18, 0.18] and wrong["correct"] is False
    e = math.exp(1 / math.sqrt(3))
    assert wrong["expected"][0] == pytest.approx(e / (e + 2))
    (d,) = wrong["diagnoses"]
    assert set(d) == {"id", "ids", "title", "explanation", "value", "lesson", "anchor", "trace"}
    assert d["id"] == "softmax-term-dropped" and d["lesson"] == "qkv"
    assert d["value"][0] == pytest.approx(e / (e + 1))
    assert right["verdict"] == "correct" and right["diagnoses"] == []
    assert unknown["verdict"] == "unknown" and unknown["diagnoses"] == []


def test_a_tie_comes_with_a_follow_up_problem():
    data = json.loads(run("qkv", "--check", "weights=1,0,0", "--json").stdout)
    check = data["checks"][0]
    assert {d["id"] for d in check["diagnoses"]} == {"no-exp", "zero-score-zero-weight"}
    assert set(check["follow_up"]) >= {"X", "W_Q", "W_K", "W_V"}


def test_checks_use_the_set_inputs():
    # q = [2, 0], k = [1, 1], d_k = 2: q·k = 2, the scaled score 2/√2 = 1.4142
    result = run("scoring-compare", "--set", "Q=2,0", "--set", "K=1,1", "--set", "W_Q=1,0;0,1",
                 "--set", "W_K=1,0;0,1", "--set", "v=1,1", "--check", "scaled=2", "--json")
    check = json.loads(result.stdout)["checks"][0]
    assert check["expected"] == pytest.approx(math.sqrt(2))
    assert [d["id"] for d in check["diagnoses"]] == ["no-scale"]


@pytest.mark.parametrize("args, message", [
    (["qkv", "--check", "weights=0.6,0.2"], "got 2 numbers, expected 3"),
    (["qkv", "--check", "weights=a,b,c"], "'a' is not a number"),
    (["qkv", "--check", "nothing=1"], "no checkable value 'nothing'"),
    (["qkv", "--check", "weights"], "expected VALUE=NUMBERS"),
    (["qkv", "--check", "weights="], "no numbers after '='"),
    (["--check", "x=1"], "name a trace"),
    (["qkv", "--check", "weights=1,0,0", "--markdown"], "not --markdown"),
    (["encoder", "--check", "pre-activation=0.5,0.1,-0.3"], "name the step"),
    (["qkv", "--set", "position=9", "--check", "weights=1,0,0"], "input position"),
])
def test_bad_checks_are_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_schema_documents_the_check_json():
    out = run("--schema").stdout
    assert "--check" in out and '"diagnoses"' in out and '"follow_up"' in out


@pytest.mark.parametrize("token, decimals", [
    ("0.47", 2), ("-0.5", 1), ("3", 0), ("25,600,000", 0), ("≈0.58", 2), ("1.5e-3", 4),
    ("1e3", 0), (".5", 1), ("−0.25", 2), ("3/4", None), ("√3", None), ("2^-3", None),
    ("e", None), ("inf", None)])
def test_typed_decimals(token, decimals):
    assert typed_decimals(token) == decimals


def test_read_typed_takes_lists_brackets_and_infinities():
    assert read_typed("[0.5, 2; -inf]") == [("0.5", 0.5, 1), ("2", 2.0, 0), ("-inf", -math.inf, None)]
    assert read_typed("1/√3 0.58")[0][2] is None


def test_parse_check_splits_at_the_last_equals_sign():
    assert parse_check("P_T=2=0.1,0.2,0.7") == ("P_T=2", [0.1, 0.2, 0.7], [1, 1, 1])
    name, values, decimals = parse_check("scaled=1/√3")
    assert decimals is None and values[0] == pytest.approx(1 / math.sqrt(3))
    assert parse_check("x=1/2,0.25")[2] == [12, 2]  # an exact form among decimals: exact
