"""`attn-tutor lab transformer` on tiny runs: the report, --json, --save/--load, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tutor.cli import app

TINY = ["--steps", "4", "--min-len", "3", "--max-len", "6", "--per-bucket", "4", "--sequential"]


def lab(*args: str):
    return CliRunner().invoke(app, ["lab", "transformer", *args])


@pytest.fixture(scope="module")
def run_json(tmp_path_factory):
    """One tiny run saving every kind of file, shared by the tests below."""
    d = tmp_path_factory.mktemp("tf")
    paths = {"npz": d / "m.npz", "html": d / "heads.html", "txt": d / "heads.txt", "dir": d / "heads"}
    res = lab(*TINY, "--digits", "3141", "--json", *sum((["--save", str(p)] for p in paths.values()), []))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), paths


def test_json_has_every_run_bucket_and_head(run_json):
    out, _ = run_json
    assert out["schema"] == 2 and out["experiment"] == "transformer"
    assert set(out["runs"]) == {"transformer", "no positions"}
    (bucket,) = out["buckets"]
    assert bucket["lengths"] == [3, 6] and bucket["n"] == 4
    for name in ("transformer", "no positions"):
        assert out["runs"][name]["steps"] == 4
        assert bucket[name]["sequence_accuracy"] == out["runs"][name]["accuracy"][0]["sequence_accuracy"]
    assert out["summary"]["transformer_min_sequence_accuracy"] == bucket["transformer"]["sequence_accuracy"]
    model = out["model"]
    from engine.lab.transformer import TransformerSettings

    assert out["n_params"] == TransformerSettings().model_config().n_params == 137_165
    assert len(out["heads"]) == 3 * model["num_heads"] * model["num_encoder_layers"]
    assert out["example"]["digits"] == [3, 1, 4, 1]
    assert out["example"]["source"] == ["3", "1", "4", "1", "</s>"]
    for h in out["heads"]:
        w = np.array(h["weights"])
        np.testing.assert_allclose(w.sum(1), 1.0, atol=1e-5)
        assert h["sentence"].startswith(("encoder self-attention", "decoder masked", "cross-attention"))
        assert h["share"] == max(h["shares"].values())


def test_saved_files_hold_every_head_and_load_again(run_json):
    out, paths = run_json
    assert "cross-attention, layer 2, head 2" in paths["txt"].read_text()
    assert "<html" in paths["html"].read_text().lower()
    files = sorted(p.name for p in paths["dir"].iterdir())
    assert len(files) == len(out["heads"]) and "cross-layer1-head1.json" in files
    one = json.loads((paths["dir"] / "cross-layer1-head1.json").read_text())
    assert one["cols"] == out["example"]["source"] and one["rows"] == out["example"]["decoder_input"]
    shown = CliRunner().invoke(app, ["heatmap", "--from", str(paths["dir"] / "cross-layer1-head1.json")])
    assert shown.exit_code == 0, shown.output
    again = lab(*TINY, "--digits", "3141", "--json", "--load", str(paths["npz"]))
    assert again.exit_code == 0, again.output
    loaded = json.loads(again.stdout)
    assert set(loaded["runs"]) == {"transformer"} and loaded["runs"]["transformer"]["steps"] == 0
    assert loaded["buckets"][0]["transformer"] == out["buckets"][0]["transformer"]   # same weights
    assert loaded["heads"][0]["weights"] == out["heads"][0]["weights"]


def test_the_report_says_what_every_head_does():
    res = lab(*TINY, "--no-positions-experiment", "--digits", "271")
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "Transformer: `reverse` digit sequences" in text
    assert "lowest sequence accuracy" in text and "Without positions" not in text
    assert "Example: 2 7 1 </s> ->" in text
    assert text.count("cross-attention, layer") >= 4        # a sentence per cross head (+ heatmap title)
    assert "decoder masked self-attention, layer 2, head 2:" in text


def test_rnn_puts_both_rnns_in_the_same_table():
    res = lab(*TINY, "--rnn", "--no-positions-experiment", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out["runs"]) == {"transformer", "attention", "fixed"}
    assert all(r["steps"] == 4 for r in out["runs"].values())
    assert set(out["buckets"][0]) == {"lengths", "n", "transformer", "attention", "fixed"}
    lines = lab(*TINY, "--rnn", "--no-positions-experiment").stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "transformer" in line and "fixed" in line)
    words = [[w for w in line.split() if w != "|"] for line in lines]   # piped: an ASCII table
    assert words[header] == ["transformer", "attention", "fixed"]   # one column per run
    assert words[header + 1] == ["length", "n", "sequence", "sequence", "sequence"]


@pytest.mark.parametrize("args,needle", [
    (["--save", "x.png"], "--save x.png: unknown file type '.png'"),
    (["--digits", "12a"], "--digits: expected only the digits 0-9"),
    (["--load", "nowhere.npz"], "nowhere.npz: no such weights file"),
    (["--dropout", "1.5"], "--dropout: expected a probability p with 0 <= p < 1, got 1.5"),
    (["--dropout", "1"], "--dropout: expected a probability p with 0 <= p < 1, got 1"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = lab(*args)
    assert res.exit_code == 2
    assert needle in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_a_negative_seed_is_a_usage_error_before_any_training(capsys):
    from tutor.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["lab", "transformer", "--seed", "-1"])
    err = capsys.readouterr()
    assert stop.value.code == 2 and err.out == ""           # no "training ..." line first
    assert err.err.strip().splitlines() == [
        "attn-tutor: error: --seed -1: expected 0 or more (see `attn-tutor lab transformer --help`)"]


def test_loading_an_rnn_file_names_what_it_holds(tmp_path):
    rnn = tmp_path / "rnn.npz"
    made = CliRunner().invoke(app, ["lab", "train", "--steps", "1", "--hidden", "4", "--embed", "2",
                                    "--attn-dim", "2", "--min-len", "2", "--max-len", "4", "--save", str(rnn)])
    assert made.exit_code == 0, made.output
    res = lab("--load", str(rnn))
    assert res.exit_code == 2
    assert "not an attn-tutor Transformer weights file (it holds seq2seq weights)" in res.output


def test_dropout_with_load_is_refused_because_nothing_trains(run_json):
    _, paths = run_json
    res = lab("--load", str(paths["npz"]), "--dropout", "0.1")
    assert res.exit_code == 2
    assert res.output.strip() == ("attn-tutor: error: --dropout with --load: nothing is trained, "
                                  "so nothing would be dropped (evaluation never drops)")


def _fake(runs):
    from types import SimpleNamespace

    from engine.lab.training import BucketAccuracy

    out = {name: SimpleNamespace(accuracy=[BucketAccuracy(lo, hi, 10, tok, seq)
                                           for (lo, hi), tok, seq in rows],
                                 steps=100, seconds=4.0, steps_per_second=25.0)
           for name, rows in runs.items()}
    res = SimpleNamespace(runs=out, seconds=8.5,
                          buckets=[(lo, hi) for (lo, hi), _, _ in runs["transformer"]])
    res.worst_bucket = lambda: min(out["transformer"].accuracy, key=lambda a: a.sequence_accuracy)
    return res


@pytest.mark.parametrize("nopos, words", [
    ([((3, 4), 0.30, 0.0), ((5, 6), 0.25, 0.0)],
     "gets no whole sequence right in any bucket (at most 30.0% of tokens)"),
    ([((3, 4), 0.50, 0.2), ((5, 6), 0.40, 0.1)],
     "reaches at most 20.0% sequence accuracy (lengths 3-4; at most 50.0% of tokens right)"),
])
def test_the_summary_names_the_worst_bucket_and_what_no_positions_reaches(nopos, words):
    from tutor.lab.report import Style
    from tutor.lab.transformer import summary

    res = _fake({"transformer": [((3, 4), 1.0, 1.0), ((5, 6), 0.99, 0.94)], "no positions": nopos})
    text = " ".join(summary(res, Style(ascii=True)))
    assert "lowest sequence accuracy 94.0% (lengths 5-6); >= 95% in every bucket: no." in text
    assert f"Without positions the same model {words}:" in text
    assert "Wall time 8.5 s (transformer: 100 steps in 4.0 s, 25.0 steps/s; no positions:" in text


def test_dropout_is_recorded_in_the_json_and_the_report():
    res = lab(*TINY, "--no-positions-experiment", "--dropout", "0.25", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["settings"]["dropout"] == 0.25 and out["model"]["dropout"] == 0.25
    text = lab(*TINY, "--no-positions-experiment", "--dropout", "0.25", "--ascii")
    assert text.exit_code == 0 and "pre-norm, dropout 0.25;" in text.stdout


def _stopped_in_evaluation():
    from dataclasses import replace

    from test_lab_transformer import TINY as ENGINE_TINY, stop_after_first_bucket

    from engine.lab.transformer import transformer

    on_progress, should_stop = stop_after_first_bucket()
    s = replace(ENGINE_TINY, positions_experiment=True)
    return transformer(s, on_progress=on_progress, should_stop=should_stop), s


def test_a_run_stopped_while_evaluating_says_which_buckets_were_not_scored():
    from tutor.lab.experiments import get
    from tutor.lab.report import Style

    res, s = _stopped_in_evaluation()
    parts = get("transformer").report(res, s, Style(ascii=True, color=False))
    words = [p for p in parts if isinstance(p, str)]
    assert ("Not evaluated on held-out sequences: the run was stopped first. Not evaluated: "
            "transformer lengths 11-12; no positions lengths 3-10, 11-12.") in words
    assert not any(w.startswith(("Transformer: lowest", "Without positions")) for w in words)
    assert not any(hasattr(p, "columns") for p in parts)              # no table of nothing
    data = get("transformer").to_json(res, s)
    assert data["interrupted"] is True and data["buckets"] == []
    assert data["not_evaluated"] == {"transformer": [[11, 12]], "no positions": [[3, 10], [11, 12]]}
    assert data["summary"] == {"transformer_min_sequence_accuracy": None,
                               "no_positions_max_sequence_accuracy": None}


def test_the_buckets_every_run_finished_are_shown_and_the_rest_named():
    from tutor.lab.experiments import get
    from tutor.lab.report import Style

    res, s = _stopped_in_evaluation()
    res.runs["no positions"].accuracy = list(res.runs["transformer"].accuracy)   # bucket 1 each
    parts = get("transformer").report(res, s, Style(ascii=True, color=False))
    assert ("Evaluation stopped after 1 of 2 length buckets: the table shows those. Not "
            "evaluated: lengths 11-12 (every run).") in parts
    (table,) = [p for p in parts if hasattr(p, "columns")]
    assert table.row_count == 1
    data = get("transformer").to_json(res, s)
    assert [b["lengths"] for b in data["buckets"]] == [[3, 10]]


def test_a_stop_before_any_scoring_needs_no_list_of_buckets():
    from tutor.lab.experiments import get
    from tutor.lab.report import Style

    res, s = _stopped_in_evaluation()
    res.runs["transformer"].accuracy = []                        # as a stop while training
    parts = get("transformer").report(res, s, Style(ascii=True, color=False))
    assert "Not evaluated on held-out sequences: the run was stopped first." in parts
    assert not any(isinstance(p, str) and "Not evaluated:" in p for p in parts)


def test_the_scoring_kernels_load_in_the_background_after_the_training_ones(monkeypatch):
    import tutor.lab.progress as progress
    import tutor.lab.run as run

    order: list[tuple[str, ...]] = []
    monkeypatch.setattr(progress, "load", lambda names: order.append(("before", *names)) or 0.0)
    monkeypatch.setattr(run, "load_in_background", lambda names: order.append(("during", *names)))
    res = lab(*TINY, "--json")
    assert res.exit_code == 0, res.output
    assert order == [("before", "transformer lab"), ("during", "transformer scoring")]
