"""Hypothesis drives the whole command line (issue 14 §5): random commands, options, values,
files and stdin through the real entry point, each run judged by
:func:`tests.fuzz_helpers.problems` (no traceback, no hang, exit 0/1/2/130, one short error
line). A quiz run must also have stored every answer it acknowledged.

The normal run tries a few dozen commands (a few seconds); ``tests/test_fuzz_slow.py`` runs
the same strategies with hundreds, plus every trace input and every heatmap option.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_helpers import assert_clean, invoke
from tests.test_fuzz_parsers import csv_text, junk, json_text

BASE = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
_TMP = Path(tempfile.mkdtemp(prefix="attn-fuzz-cli-"))

from engine.traces import REGISTRY, input_specs  # noqa: E402  (metadata only: no numba)

LESSONS = ["encoder-decoder", "qkv", "scoring", "exam", "qa", "QKV", "Scoring", "5", "12", "0",
           "13", "²", "٣", "qvk", "lesson", ""]
TOPICS = ["scoring", "Scoring", "qkv", "exam-decoding", "decoding", "7", "99", "²", "nope", ""]
MODES = ["practice", "review", "weak", "retry", "mock", "Mock", "cram", ""]
NUMBERS = ["0", "1", "2", "-1", "3", "1e3", "7" * 30, "7" * 5000, "²", "", "nan", "inf", "-inf",
           "0.5", "1e308", "abc", "4294967296"]
numbers = st.one_of(st.sampled_from(NUMBERS), st.integers(-5, 50).map(str))
traces = st.one_of(st.sampled_from(sorted(REGISTRY)), st.sampled_from(["QKV", "Beam-Search", "nope", "qvk", ""]))


@st.composite
def set_options(draw, trace: str) -> list[str]:
    """``--set NAME=VALUE`` for the trace's own inputs (and a stranger), values plausible or junk."""
    try:
        names = [spec.name for spec in input_specs(trace)]
    except (ValueError, KeyError):
        names = []
    out = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(names + ["nope", "x y"]) if names else st.just("Q"))
        value = draw(st.one_of(junk, st.sampled_from(["1,0; 0,1", "0.5", "my feet hurt", "[[1,0],[0,1]]",
                                                      "1, 0, -1", "true", "3", "0"])))
        out += ["--set", f"{name}={value}"]
    return out


@st.composite
def trace_args(draw) -> list[str]:
    name = draw(traces)
    args = ["trace", name] + draw(set_options(name))
    args += draw(st.sampled_from([[], ["--json"], ["--plain"], ["--markdown"], ["--inputs"]]))
    if draw(st.booleans()):
        args += ["--step", draw(numbers)]
    return args


@st.composite
def matrix_file(draw) -> Path:
    kind = draw(st.sampled_from([".csv", ".tsv", ".json", ".npy"]))
    path = _TMP / f"m{draw(st.integers(0, 9))}{kind}"
    if kind == ".npy":
        shape = draw(st.sampled_from([(2, 3), (1, 1), (3,), (2, 2, 2), (0, 3), (300, 2)]))
        fill = draw(st.sampled_from([0.5, float("nan"), 1e9, -0.1]))
        np.save(path, np.full(shape, fill))
    else:
        text = draw(csv_text if kind != ".json" else json_text)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


@st.composite
def heatmap_args(draw) -> list[str]:
    if draw(st.booleans()):
        name = draw(st.sampled_from(["heatmap-reading", "dynamic-context", "qkv", "scores", "Heatmap-Reading",
                                     "plain", "nope"]))
        args = ["heatmap", name] + draw(set_options(name))
        if draw(st.booleans()):
            args += ["--index", draw(numbers)]
    else:
        args = ["heatmap", "--from", str(draw(matrix_file()))]
        for flag in ("--rows", "--cols", "--title"):
            if draw(st.booleans()):
                args += [flag, draw(st.one_of(junk, st.sampled_from(["my feet hurt", "j' ai mal", "</s>"])))]
    for flag in ("--values", "--ascii"):
        if draw(st.booleans()):
            args.append(flag)
    if draw(st.booleans()):
        args += ["--scale", draw(st.sampled_from(["matrix", "row", "ROW", "column"]))]
    if draw(st.booleans()):
        args += ["--width", draw(numbers)]
    if draw(st.booleans()):
        args += ["--save", str(_TMP / draw(st.sampled_from(["h.txt", "h.svg", "h.html", "h.png", "h"])))]
    return args


@st.composite
def quiz_args(draw) -> list[str]:
    args = ["quiz", "--plain", "--mode", draw(st.sampled_from(MODES))]
    for _ in range(draw(st.integers(0, 2))):
        args += ["--topic", draw(st.sampled_from(TOPICS))]
    for flag in ("--count", "--seed", "--time-limit"):
        if draw(st.booleans()):
            args += [flag, draw(numbers)]
    if draw(st.booleans()):
        args.append("--no-generated")
    return args


@st.composite
def lab_args(draw) -> list[str]:
    """A lab command with at least one option that must fail before any training starts."""
    sub = draw(st.sampled_from(["bottleneck", "teacher-forcing", "alignment", "train", "transformer",
                                "scaling", "saturation", "Train", "nope"]))
    args = ["lab", sub]
    garbage = _TMP / "garbage.npz"
    garbage.write_bytes(draw(st.binary(max_size=64)))
    bad = {
        "train": [["--load", str(garbage)], ["--save", "m.pt"], ["--hidden", draw(numbers)],
                  ["--ratio", draw(st.sampled_from(["nan", "2", "-0.1", "inf"]))], ["--steps", "100001"]],
        "alignment": [["--load", str(garbage)], ["--save", str(_TMP / "a.png")],
                      ["--digits", draw(st.one_of(junk, st.just("1" * 61)).filter(
                          lambda d: not (d.isdigit() and d.isascii() and len(d) <= 60)))]],
        "transformer": [["--load", str(garbage)], ["--save", str(_TMP / "t.png")],
                        ["--digits", draw(st.one_of(junk, st.just("1" * 64)).filter(
                            lambda d: not (d.isdigit() and d.isascii() and len(d) <= 63)))]],
        "scaling": [["--max-n", "16385"], ["--min-n", "64", "--max-n", "32"], ["--d", "0"]],
        "saturation": [["--max-d", "4097"], ["--min-d", "64", "--max-d", "8"], ["--keys", "1"]],
    }.get(sub.lower(), [["--steps", draw(st.sampled_from(["0", "-1", "100001", "x"]))],
                        ["--seed", draw(st.sampled_from(["-1", "4294967296", "x", "7" * 5000]))]])
    if draw(st.booleans()):
        args.append("--json")
    return args + draw(st.sampled_from(bad))  # last, so no later option can override it


DATES = ["2027-06-01", "2026-12-02", "1999-01-01", "9999-12-31", "2027-13-01", "tomorrow", "", "²"]


@st.composite
def exam_args(draw) -> list[str]:
    """The exam wing: a timed paper on stdin, the plan, the formula sheet, the exports."""
    kind = draw(st.sampled_from(["paper", "plan", "sheet", "export"]))
    if kind == "paper":
        args = ["paper", "--plain", "--minutes", draw(st.sampled_from(["0", "5", "inf", "nan", "-1", "601"]))]
        for flag in ("--questions", "--seed"):
            if draw(st.booleans()):
                args += [flag, draw(numbers)]
        if draw(st.booleans()):
            args += ["--topic", draw(st.sampled_from(TOPICS))]
        return args
    if kind == "plan":
        args = ["plan", "--exam", draw(st.sampled_from(DATES))]
        if draw(st.booleans()):
            args += ["--today", draw(st.sampled_from(DATES))]
        if draw(st.booleans()):
            args += ["--minutes", draw(numbers)]
        return args + draw(st.sampled_from([[], ["--json"]]))
    if kind == "sheet":
        args = ["sheet"] + draw(st.sampled_from([[], ["--markdown"], ["--html"], ["--markdown", "--html"]]))
        if draw(st.booleans()):
            args += ["-o", str(_TMP / draw(st.sampled_from(["s.md", "s.html", "s", "no/such/dir/s.md"])))]
        return args
    fmt = draw(st.sampled_from(["anki", "markdown", "csv", "Anki", "nope", ""]))
    return ["export", fmt, str(_TMP / draw(st.sampled_from(["r.apkg", "r.md", "r.csv", "r", "no/dir/r.csv"])))]


lines = st.one_of(junk, st.sampled_from(["a", "b", "c", "1", "2", "3", "4", "true", "f", "0.5", "√2",
                                         "0,367", ":hint", ":skip", ":quit", "", "7" * 5000,
                                         "x" * 70_000, "\x04", "again", "good"]))
stdin = st.lists(lines, max_size=14).map(lambda ls: "\n".join(ls) + "\n")

other_args = st.one_of(
    st.tuples(st.just("lesson"), st.sampled_from(LESSONS)).map(list).map(lambda a: a + ["--plain"]),
    st.just(["lesson"]), st.just(["lesson", "--exam", "qkv"]),
    st.sampled_from([["stats"], ["stats", "--json"], ["check"], ["check", "--json"], ["--version"],
                     ["lab"], ["LESSON", "QKV", "--PLAIN"], ["nope"], ["trace", "--set", "Q=1"]]),
    st.tuples(st.just("stats"), st.just("--goal"), numbers).map(list),
    st.lists(st.one_of(junk, st.sampled_from(["--set", "--help", "-h", "--", "-x"])), max_size=4),
)


def run_and_judge(args: list[str], text: str = "") -> None:
    """One command: clean by the rules, and a quiz stores every answer it acknowledged."""
    before = _answers_stored() if args[:1] == ["quiz"] else None
    run = invoke(args, stdin=text, timeout=60)
    assert_clean(run)
    if run.code == 0 and "--json" in args and args[:1] != ["lab"]:
        json.loads(run.out)
    if before is not None and run.code == 0 and "NOT saved" not in run.out:
        answered = re.search(r"^Answered (\d+) of", run.out, re.M)
        if answered:
            assert _answers_stored() - before == int(answered.group(1)), run


def _answers_stored() -> int:
    from tutor.store import open_store

    with open_store() as store:
        return len(store.answers())


no_stdin = st.just("")
COMMANDS = {  # family: (argv, stdin, examples in the normal run, in the slow suite)
    "trace": (trace_args(), no_stdin, 12, 150),
    "heatmap": (heatmap_args(), no_stdin, 8, 150),
    "quiz": (quiz_args(), stdin, 6, 60),
    "lab": (lab_args(), no_stdin, 8, 100),
    "exam": (exam_args(), stdin, 6, 80),
    "other": (other_args, no_stdin, 12, 150),
}


def command_test(family: str, slow: bool = False):
    """A Hypothesis test running ``family``'s commands through :func:`run_and_judge`."""
    argv, text, n, many = COMMANDS[family]

    @settings(BASE, max_examples=many if slow else n)
    @given(argv, text)
    def test(args, text):
        run_and_judge(args, text)

    return test


test_trace_commands_are_clean = command_test("trace")
test_heatmap_commands_are_clean = command_test("heatmap")
test_quiz_commands_are_clean_and_keep_every_answer = command_test("quiz")
test_lab_commands_refuse_bad_options_before_training = command_test("lab")
test_exam_commands_are_clean = command_test("exam")
test_other_commands_are_clean = command_test("other")
