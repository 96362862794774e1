"""Issue 14's named cases, one test each: limits checked before any work (§2), and the
tracebacks and wrong exit codes it listed (§3). Every run goes through the real entry point
(:func:`tests.fuzz_helpers.invoke`) and must be clean by its rules: one error line, exit 2
for a user mistake, no traceback, no hang, no 100 KB echo of the input.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tests.fuzz_helpers import MAX_LINE, assert_clean, error_line, invoke

DEEP = 50_000
DIGITS = "7" * 5000


def fails(args, *fragments, stdin="", code=2, env=None):
    """Run ``args``; it must fail cleanly with ``code`` and an error line holding ``fragments``."""
    run = invoke(args, stdin=stdin, env=env)
    assert_clean(run)
    assert run.code == code, run
    line = error_line(run)
    for fragment in fragments:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    return line


# --------------------------------------------------------------------------- §2 limits


def test_a_5000_by_5000_toml_file_is_refused_by_its_size(tmp_path):
    row = "[" + ",".join(["0"] * 5000) + "]"
    path = tmp_path / "big.toml"
    with path.open("w") as fh:
        fh.write("Q = [\n")
        for _ in range(5000):
            fh.write(row + ",\n")
        fh.write("]\n")
    line = fails(["trace", "qkv", "--file", str(path)], "--file", "larger than")
    assert "KB" in line or "MB" in line  # the limit is named with its size


def test_5000_tokens_are_refused_before_the_trace_is_built():
    words = " ".join(f"w{i}" for i in range(5000))
    line = fails(["trace", "bottleneck", "--set", f"review={words}"], "input review", "5000 words")
    assert "at most" in line


def test_a_5000_by_5000_npy_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.npy"
    np.save(path, np.zeros((5000, 5000), np.int8))  # 25 MB: refused by its size
    fails(["heatmap", "--from", str(path)], "larger than the 8 MB")


def test_an_npy_header_claiming_5000_by_5000_is_refused_before_any_allocation(tmp_path):
    from numpy.lib import format as npy

    path = tmp_path / "claims.npy"  # a header for 200 MB of float64, and no data
    with path.open("wb") as fh:
        npy.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False,
                                        "shape": (5000, 5000)})
    assert path.stat().st_size < 1000
    fails(["heatmap", "--from", str(path)], "5000 × 5000", "at most 256")


def test_a_one_by_a_million_npy_is_refused_from_its_header(tmp_path):
    path = tmp_path / "wide.npy"
    np.save(path, np.zeros((1, 1_000_000), np.int8))
    fails(["heatmap", "--from", str(path)], "1 × 1000000", "at most")


def test_a_5000_by_5000_csv_is_refused(tmp_path):
    path = tmp_path / "big.csv"
    row = ",".join(["0"] * 5000) + "\n"
    path.write_text(row * 5000)
    fails(["heatmap", "--from", str(path)], "--from", "larger than")


def test_nesting_50000_deep_in_set_toml_and_json_is_refused(tmp_path):
    deep = "[" * DEEP + "]" * DEEP
    fails(["trace", "qkv", "--set", f"Q={deep}"], "input Q", "nested", "at most")
    toml = tmp_path / "deep.toml"
    toml.write_text(f"Q = {deep}\n")
    fails(["trace", "qkv", "--file", str(toml)], "--file", "nested", "at most")
    js = tmp_path / "deep.json"
    js.write_text(deep)
    fails(["heatmap", "--from", str(js)], "--from", "nested", "at most")


@pytest.mark.parametrize("where", ["set", "json-set", "toml", "csv", "json-file"])
def test_numbers_of_5000_digits_name_the_digit_limit(tmp_path, where):
    if where == "set":
        args = ["trace", "scores", "--set", f"Q={DIGITS}, 1"]
    elif where == "json-set":
        args = ["trace", "scores", "--set", f"Q=[{DIGITS}, 1]"]
    elif where == "toml":
        (tmp_path / "n.toml").write_text(f"Q = [{DIGITS}, 1]\n")
        args = ["trace", "scores", "--file", str(tmp_path / "n.toml")]
    elif where == "csv":
        (tmp_path / "n.csv").write_text(f"0.5,{DIGITS}\n0.5,0.5\n")
        args = ["heatmap", "--from", str(tmp_path / "n.csv")]
    else:
        (tmp_path / "n.json").write_text(f"[[0.5, {DIGITS}], [0.5, 0.5]]")
        args = ["heatmap", "--from", str(tmp_path / "n.json")]
    line = fails(args, "digits")
    assert "4300" not in line and "sys.set_int_max_str_digits" not in line


def test_error_lines_echo_only_a_short_prefix_of_a_100_kb_value():
    value = "x," * 50_000  # 100 KB: a list with non-numbers in it
    line = fails(["trace", "scores", "--set", f"Q=1,{value}"], "input Q")
    assert len(line) < MAX_LINE


def test_a_huge_word_is_refused_with_a_short_echo():
    line = fails(["trace", "qkv", "--set", "tokens=I love " + "c" * 100_000], "input tokens")
    assert len(line) < MAX_LINE


def test_csv_with_an_empty_cell_in_its_first_row_is_an_error_not_labels(tmp_path):
    path = tmp_path / "gap.csv"
    path.write_text("1,,2\n3,4,5\n")
    fails(["heatmap", "--from", str(path)], "line 1, column 2 is empty")


def _weights(tmp_path: Path) -> Path:
    """A real (untrained) tiny model file, written as `lab train --save` writes one."""
    from engine.seq2seq import Seq2Seq, Seq2SeqConfig
    from tutor.lab.files import save_model

    config = Seq2SeqConfig(vocab_size=13, embed_dim=2, hidden_dim=2, attn_dim=2)
    path = tmp_path / "m.npz"
    save_model(path, Seq2Seq.init(config), {"task": "copy", "min_len": 2, "max_len": 4,
                                            "steps": 3, "seed": 0, "teacher_forcing_ratio": 1.0})
    return path


def _with_record(path: Path, **changes) -> Path:
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    record = json.loads(str(arrays["__record__"]))
    record.update(changes)
    arrays["__record__"] = np.array(json.dumps(record))
    out = path.with_name("changed.npz")
    np.savez(out, **arrays)
    return out


def test_a_record_with_lengths_of_100000_is_refused(tmp_path):
    bad = _with_record(_weights(tmp_path), min_len=100_000, max_len=100_000)
    fails(["lab", "train", "--load", str(bad), "--steps", "0"], "min_len", "100000", "at most")


def test_alignment_digits_of_5000_are_refused_before_training():
    # used to train a model and then reach 3.6 GB drawing a 5000-long test sequence
    fails(["lab", "alignment", "--digits", "1" * 5000], "--digits", "5000 digits", "at most 60")


def test_an_npz_that_decompresses_beyond_the_limit_is_refused(tmp_path):
    path = tmp_path / "bomb.npz"
    chunk = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("param/enc_embed.npy", "w", force_zip64=True) as fh:
            for _ in range(300):  # 300 MB of zeros, a few hundred KB on disk
                fh.write(chunk)
    assert path.stat().st_size < 2_000_000
    fails(["lab", "train", "--load", str(path), "--steps", "0"], "decompress", "at most")


# --------------------------------------------------------------------------- §3 tracebacks


@pytest.mark.parametrize("limit", ["inf", "nan", "-5", "1e308"])
def test_mock_time_limit_that_is_not_a_sensible_number_is_refused(limit):
    fails(["quiz", "--plain", "--mode", "mock", "--time-limit", limit], "--time-limit")
    from tutor.store import open_store

    with open_store() as store:  # nothing was started, so nothing stays "running"
        assert store.mock_exams() == []


@pytest.mark.parametrize(("steps", "fragment"), [
    ([1], "steps"), ("Infinity", "steps"), ("many", "steps"), (-3, "steps"), (1.5, "steps"),
])
def test_a_record_field_of_the_wrong_type_or_range_is_one_line(tmp_path, steps, fragment):
    path = _weights(tmp_path)
    if steps == "Infinity":  # json.dumps writes float("inf") as the bare word Infinity
        steps = float("inf")
    bad = _with_record(path, steps=steps)
    fails(["lab", "train", "--load", str(bad), "--steps", "0"], fragment, "record")


@pytest.mark.parametrize(("field", "value"), [
    ("task", 5), ("task", "juggle"), ("seed", "x"), ("teacher_forcing_ratio", 7),
    ("min_len", True), ("max_len", None),
])
def test_every_record_field_is_checked(tmp_path, field, value):
    bad = _with_record(_weights(tmp_path), **{field: value})
    fails(["lab", "train", "--load", str(bad), "--steps", "0"], field)


@pytest.mark.parametrize(("field", "value"), [
    ("max_len", 100_000), ("num_encoder_layers", 10**6), ("d_model", "64"), ("d_ff", 10**9),
])
def test_a_transformer_record_config_out_of_range_is_refused_before_building(tmp_path, field, value):
    # max_len sizes the position table: 100000 rows would be built before any shape check
    from engine.transformer import Transformer, TransformerConfig
    from tutor.lab.files import TRANSFORMER_FORMAT, save_model

    path = tmp_path / "t.npz"
    config = TransformerConfig(d_model=4, num_heads=2, d_ff=4, num_encoder_layers=1,
                               num_decoder_layers=1, max_len=8)
    save_model(path, Transformer.init(config), {"task": "reverse"}, TRANSFORMER_FORMAT)
    with np.load(path) as data:
        record = json.loads(str(data["__record__"]))
    bad = _with_record(path, config={**record["config"], field: value})
    fails(["lab", "transformer", "--load", str(bad)], f"config.{field}", "record")


@pytest.mark.parametrize("key", ["²", "٣", "½", "1" * 5000])
def test_lesson_with_a_digit_that_is_not_0_to_9_is_one_line(key):
    fails(["lesson", key], "no lesson")


@pytest.mark.parametrize("seed", range(1, 7))  # seed 4 starts with a multiple-choice question
def test_a_quiz_answer_of_5000_digits_is_refused_and_the_session_goes_on(seed):
    run = invoke(["quiz", "--plain", "--count", "3", "--seed", str(seed)],
                 stdin=f"{DIGITS}\n" * 6)
    assert_clean(run)
    assert run.code == 0, run
    assert "Not an answer" in run.out and "Answered" in run.out  # hinted, then the summary


def _serve_env(monkeypatch):
    pytest.importorskip("textual_serve")


def test_serve_on_a_busy_port_is_one_line_and_says_nothing_about_serving(monkeypatch):
    import socket

    _serve_env(monkeypatch)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = invoke(["serve", "--host", "127.0.0.1", "--port", str(port)])
    assert_clean(run)
    assert run.code == 2 and f"port {port}" in error_line(run) and "--port" in error_line(run)
    assert "Serving" not in run.out + run.err


def test_serve_on_an_unknown_host_is_one_line(monkeypatch):
    _serve_env(monkeypatch)
    fails(["serve", "--host", "no-such-host.invalid"], "no-such-host.invalid")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_narrow_output_encodings_degrade_to_ascii(encoding, tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": encoding}
    for args, stdin in ((["stats"], ""), (["quiz", "--plain", "--seed", "1", "--count", "2"],
                                          "b\n0.5\n:skip\n:skip\n")):
        out = subprocess.run([sys.executable, "-m", "tutor", *args], input=stdin,
                             capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, (args, out.stderr[-2000:])
        assert "Traceback" not in out.stderr
        assert out.stdout.isascii(), args


# --------------------------------------------------------------------------- §5 internal errors


def test_a_bug_is_one_line_naming_the_report_with_the_full_traceback(monkeypatch):
    import tutor.commands.stats as stats

    def broken(**kwargs):
        raise ZeroDivisionError("a bug planted by this test")

    monkeypatch.setattr(stats, "run", broken)
    run = invoke(["stats"])
    assert run.crash is None and run.code == 70
    (line,) = run.err.splitlines()
    assert line.startswith("attn-tutor: internal error (ZeroDivisionError: a bug planted by this test)")
    report = Path(line.split("the full report is in ", 1)[1].split(". This is a bug")[0])
    text = report.read_text()
    assert "Traceback (most recent call last)" in text and "def broken" not in line
    assert "a bug planted by this test" in text and "broken" in text
