"""`attn-tutor lab ...` on tiny configurations: JSON, human output, weights files, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tutor.cli import app

TINY = ["--steps", "3", "--min-len", "3", "--max-len", "6"]
TINY_MODEL = ["--hidden", "8", "--embed", "4", "--attn-dim", "4"]


def lab(*args: str):
    return CliRunner().invoke(app, ["lab", *args])


def ok_json(*args: str) -> dict:
    res = lab(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_lab_lists_its_experiments():
    res = lab("--help")
    assert res.exit_code == 0
    for name in ("bottleneck", "teacher-forcing", "alignment", "train"):
        assert name in res.output


def test_bottleneck_json_on_a_tiny_configuration():
    out = ok_json("bottleneck", *TINY, "--per-bucket", "4", "--hidden", "8", "--sequential",
                  "--seed", "3")
    assert out["experiment"] == "bottleneck" and out["schema"] == 2
    assert out["settings"]["train"]["seed"] == 3 and out["settings"]["hidden_dim"] == 8
    assert out["interrupted"] is False
    (bucket,) = out["buckets"]
    assert bucket["lengths"] == [3, 6] and bucket["n"] == 4
    for name in ("attention", "fixed"):
        acc = bucket[name]
        assert 0 <= acc["token_accuracy"] <= 1 and 0 <= acc["sequence_accuracy"] <= 1
        run = out["runs"][name]
        assert run["steps"] == 3 and len(run["loss_curve"]["loss_per_token"]) == 3
        assert run["accuracy"][0]["token_accuracy"] == acc["token_accuracy"]
    gap = bucket["attention"]["token_accuracy"] - bucket["fixed"]["token_accuracy"]
    assert out["summary"]["gap_at_longest_bucket"] == pytest.approx(gap, abs=1e-5)
    assert out["summary"]["attention_min_token_accuracy_up_to_30"] == bucket["attention"]["token_accuracy"]


def test_the_same_seed_gives_the_same_json():
    args = ("bottleneck", *TINY, "--per-bucket", "4", "--hidden", "8", "--seed", "5")
    a, b = ok_json(*args), ok_json(*args)
    for out in (a, b):
        out.pop("seconds")
        for run in out["runs"].values():
            run.pop("seconds"), run.pop("steps_per_second")
    assert a == b


def test_bottleneck_human_output_has_a_table_a_plot_and_a_verdict():
    res = lab("bottleneck", *TINY, "--per-bucket", "4", "--hidden", "8", "--ascii")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "attention" in out and "fixed" in out and "3-6" in out
    assert "token accuracy (%) by source length" in out
    assert "Longest bucket (3-6)" in out
    assert all(ord(ch) < 128 for ch in out), [ch for ch in out if ord(ch) >= 128][:5]


def test_teacher_forcing_json_has_both_ratios():
    out = ok_json("teacher-forcing", "--steps", "3", "--max-len", "6", "--per-bucket", "4")
    assert list(out["runs"]) == ["ratio 1", "ratio 0"]
    assert [r["teacher_forcing_ratio"] for r in out["runs"].values()] == [1.0, 0.0]
    assert all(r["steps"] == 3 for r in out["runs"].values())


def test_alignment_json_on_given_digits():
    out = ok_json("alignment", "--steps", "3", "--max-len", "6", "--digits", "3141")
    assert out["source"] == ["3", "1", "4", "1", "</s>"]
    assert out["target"] == ["1", "4", "1", "3", "</s>"]
    assert out["expected_column"] == [3, 2, 1, 0, None]
    W = np.array(out["weights"])
    assert W.shape == (5, 5)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-5)
    assert out["training"]["steps"] == 3


def test_alignment_refuses_bad_digits():
    res = lab("alignment", "--steps", "3", "--digits", "12a")
    assert res.exit_code == 2
    assert "--digits" in res.stderr and "Traceback" not in res.output


def _train(tmp_path: Path, *extra: str) -> tuple[dict, Path]:
    path = tmp_path / "model.npz"
    out = ok_json("train", *TINY, *TINY_MODEL, "--task", "copy", "--save", str(path), *extra)
    return out, path


def test_train_saves_and_loads_the_same_model(tmp_path):
    out, path = _train(tmp_path)
    assert out["saved_to"] == str(path) and out["model"]["hidden_dim"] == 8
    with np.load(path) as data:
        record = json.loads(str(data["__record__"]))
    assert record["format"] == "attn-tutor-seq2seq" and record["task"] == "copy"
    assert record["config"]["decoder"] == "attention" and record["steps"] == 3
    again = ok_json("train", "--load", str(path), "--steps", "0")
    assert again["loaded_from"] == str(path) and again["steps"] == 0
    assert again["model"] == out["model"]
    # same weights, same task and lengths from the record → the same held-out accuracy
    assert again["accuracy"] == out["accuracy"]


def test_train_continues_a_loaded_model_and_counts_its_steps(tmp_path):
    _, path = _train(tmp_path)
    more = tmp_path / "more.npz"
    ok_json("train", "--load", str(path), "--steps", "2", "--save", str(more))
    with np.load(more) as data:
        assert json.loads(str(data["__record__"]))["steps"] == 5


def test_a_weights_file_of_the_wrong_shape_is_refused_in_one_line(tmp_path):
    _, path = _train(tmp_path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    record = json.loads(str(arrays["__record__"]))
    record["config"]["hidden_dim"] = 16                 # the arrays are for 8
    arrays["__record__"] = np.array(json.dumps(record))
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    res = lab("train", "--load", str(bad), "--steps", "0")
    assert res.exit_code == 2
    msg = res.stderr.strip()
    assert len(msg.splitlines()) == 1
    assert msg.startswith("attn-tutor: error:") and "wrong shape" in msg and "16" in msg


@pytest.mark.parametrize("content", [b"not a zip", None])
def test_a_file_that_is_not_a_weights_file_is_refused(tmp_path, content):
    path = tmp_path / "x.npz"
    if content is None:
        np.savez(path, weights=np.zeros(3))             # an .npz, but not ours
    else:
        path.write_bytes(content)
    res = lab("train", "--load", str(path), "--steps", "0")
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1 and str(path) in res.stderr


def test_alignment_refuses_a_fixed_context_model(tmp_path):
    _, path = _train(tmp_path, "--decoder", "fixed")
    res = lab("alignment", "--load", str(path))
    assert res.exit_code == 2
    assert "attention" in res.stderr and "fixed" in res.stderr


def test_train_without_load_needs_steps():
    res = lab("train", "--steps", "0")
    assert res.exit_code == 2 and "--load" in res.stderr


def test_command_module_imports_only_typer_at_top_level():
    code = ("import sys\nimport tutor.commands.lab\n"
            "print(sorted(m for m in ('numpy', 'numba', 'rich.console', 'engine') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _read_until(fd: int, pattern: "re.Pattern[str]", deadline: float) -> str:
    """Read a pseudo-terminal until ``pattern`` matches its text (escape codes removed)."""
    import re
    import select

    raw = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:        # the other end closed
            break
        if not chunk:
            break
        raw += chunk
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", raw.decode(errors="replace"))
        if pattern.search(text):
            return text
    raise AssertionError(f"never saw {pattern.pattern!r} in: {raw[-2000:]!r}")


def test_ctrl_c_stops_training_and_reports_what_it_has(tmp_path):
    """Ctrl-C once a progress bar shows finished steps (not after a guessed delay, which a busy
    machine can spend still loading the kernels): training stops, the JSON covers the steps done."""
    import fcntl
    import pty
    import re
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 160, 0, 0))
    env = {**os.environ, "ATTN_TUTOR_HOME": str(tmp_path), "TERM": "xterm", "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "lab", "bottleneck", "--steps", "100000", "--min-len", "3",
         "--max-len", "6", "--per-bucket", "4", "--hidden", "8", "--json"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, text=True, env=env,
    )
    os.close(slave)
    try:
        shown = _read_until(master, re.compile(r"attention\s.*?\b[1-9]\d*/100000"),
                            time.monotonic() + 600)
        assert "Ctrl-C stops early and reports" in shown      # the note came before the bars
        proc.send_signal(signal.SIGINT)
        out = proc.stdout.read()
        err = _read_until(master, re.compile(r"interrupted; the results above"),
                          time.monotonic() + 120)
        assert proc.wait(timeout=60) == 130, err
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    data = json.loads(out)
    assert data["interrupted"] is True
    assert 0 < data["runs"]["attention"]["steps"] < 100000
    assert "Traceback" not in err


def test_alignment_saves_weights_the_heatmap_command_reads(tmp_path):
    from tutor.cli import app as cli

    path = tmp_path / "alignment.json"
    r = CliRunner().invoke(cli, ["lab", "alignment", "--steps", "20", "--max-len", "6", "--length", "4",
                                 "--save", str(path)], env={"NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    data = json.loads(path.read_text())
    assert len(data["weights"]) == len(data["rows"]) and len(data["weights"][0]) == len(data["cols"]) == 5
    drawn = CliRunner().invoke(cli, ["heatmap", "--from", str(path), "--width", "80"], env={"NO_COLOR": "1"})
    assert drawn.exit_code == 0 and "Learned attention" in drawn.output


def test_alignment_refuses_an_unknown_save_type_before_training(tmp_path):
    from tutor.cli import app as cli

    r = CliRunner().invoke(cli, ["lab", "alignment", "--save", str(tmp_path / "a.png")])
    assert r.exit_code == 2
    assert "unknown file type '.png'; expected .json, .txt, .svg or .html" in r.stderr


def _tiny_bottleneck(max_len: int):
    from engine import lab as engine_lab

    return engine_lab.BottleneckSettings(
        train=engine_lab.TrainSettings(min_len=3, max_len=max_len, steps=4, batch_size=8),
        hidden_dim=8, embed_dim=4, attn_dim=4, per_bucket=3, parallel=False)


def test_a_run_stopped_before_evaluation_reports_no_accuracy():
    from engine import lab as engine_lab
    from tutor.lab.experiments import get
    from tutor.lab.report import Style

    stopping = []
    s = _tiny_bottleneck(6)
    res = engine_lab.bottleneck(
        s, on_progress=lambda e: stopping.append(1) if e.phase == "evaluate" else None,
        should_stop=lambda: bool(stopping))
    parts = get("bottleneck").report(res, s, Style(ascii=True, color=False))
    words = [p for p in parts if isinstance(p, str)]
    assert "Not evaluated on held-out sequences: the run was stopped first." in words
    assert len(words) == len(parts)                          # no table, no plot
    data = get("bottleneck").to_json(res, s)
    assert data["interrupted"] is True and data["buckets"] == []
    assert data["summary"] == {"attention_min_token_accuracy_up_to_30": None,
                               "gap_at_longest_bucket": None}


def test_a_partly_evaluated_run_shows_the_buckets_every_model_finished():
    from engine import lab as engine_lab
    from tutor.lab.experiments import get
    from tutor.lab.report import Style

    s = _tiny_bottleneck(20)
    res = engine_lab.bottleneck(s)
    assert len(res.buckets) == 3
    res.runs["fixed"].accuracy = res.runs["fixed"].accuracy[:1]   # as a stop leaves it
    parts = get("bottleneck").report(res, s, Style(ascii=True, color=False))
    assert "Evaluation stopped after 1 of 3 length buckets: the table shows those." in parts
    (table,) = [p for p in parts if not isinstance(p, str) and hasattr(p, "columns")]
    assert table.row_count == 1
    assert not any(isinstance(p, str) and p.startswith("Longest bucket") for p in parts)
    data = get("bottleneck").to_json(res, s)
    assert [b["lengths"] for b in data["buckets"]] == [[3, 10]]
    assert data["summary"]["gap_at_longest_bucket"] is None


def test_a_long_kernel_load_is_announced_on_stderr_when_it_is_not_a_terminal(monkeypatch):
    import threading

    from engine import lab as engine_lab
    from tutor.lab.progress import warm_up_kernels

    said, heard = [], threading.Event()

    def say(line: str) -> None:
        said.append(line)
        heard.set()

    monkeypatch.setattr(engine_lab, "warm_up", lambda: heard.wait(60))  # a load that takes long
    warm_up_kernels(False, quiet_for=0.0, say=say)
    assert said == ["attn-tutor: loading the lab's numba kernels (a first run compiles them once)…"]
    said.clear()
    monkeypatch.setattr(engine_lab, "warm_up", lambda: None)          # a cached load: silent
    warm_up_kernels(False, quiet_for=60.0, say=say)
    assert said == []


@pytest.mark.parametrize("args", [
    ("bottleneck", *TINY, "--per-bucket", "4", "--hidden", "8"),
    ("train", *TINY, *TINY_MODEL),
    ("scaling", "--min-n", "16", "--max-n", "32", "--d", "8", "--repeat", "1"),
    ("saturation", "--max-d", "8", "--samples", "200", "--trials", "20"),
])
def test_every_lab_command_writes_ascii_to_a_pipe(args):
    # one character set for the family when piped (no --ascii): scaling always did; the
    # training experiments drew Braille plots and Unicode tables
    res = lab(*args)
    assert res.exit_code == 0, res.output
    assert res.stdout.isascii(), sorted({ch for ch in res.stdout if not ch.isascii()})[:5]
