"""engine.lab: task data, held-out sets, evaluation, experiments with callbacks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine import lab
from engine.seq2seq import Seq2Seq

TINY_TRAIN = lab.TrainSettings(min_len=3, max_len=6, steps=6, batch_size=8)


def digits_of(batch, b, which="src"):
    arr = getattr(batch, which)
    L = int(getattr(batch, f"{which}_len")[b]) - 1
    return (arr[b, :L] - lab.DIGIT0).tolist(), int(arr[b, L])


# ---------------------------------------------------------------------------- data


@pytest.mark.parametrize("task", lab.TASKS)
def test_batches_hold_the_task_with_eos_and_padding(task):
    rng = np.random.default_rng(0)
    batch = lab.make_batch(task, [1, 4, 7], rng)
    assert batch.src.shape == batch.tgt.shape == (3, 8)
    np.testing.assert_array_equal(batch.src_len, [2, 5, 8])
    for b in range(3):
        src, end_s = digits_of(batch, b)
        tgt, end_t = digits_of(batch, b, "tgt")
        assert end_s == end_t == lab.EOS
        want = {"reverse": src[::-1], "copy": src, "sort": sorted(src)}[task]
        assert tgt == want
        L = batch.src_len[b]
        assert (batch.src[b, L:] == lab.PAD).all() and (batch.tgt[b, L:] == lab.PAD).all()


def test_the_data_stream_is_deterministic_for_a_seed():
    a = lab.make_batch("reverse", [5, 9], np.random.default_rng(42))
    b = lab.make_batch("reverse", [5, 9], np.random.default_rng(42))
    c = lab.make_batch("reverse", [5, 9], np.random.default_rng(43))
    np.testing.assert_array_equal(a.src, b.src)
    assert not np.array_equal(a.src, c.src)
    t1 = lab.make_test_set("copy", [(5, 10), (11, 15)], 6, seed=3)
    t2 = lab.make_test_set("copy", [(5, 10), (11, 15)], 6, seed=3)
    for x, y in zip(t1.batches, t2.batches):
        np.testing.assert_array_equal(x.src, y.src)


def test_bucketed_lengths_stay_in_range_and_near_a_centre():
    rng = np.random.default_rng(1)
    for _ in range(50):
        lens = lab.bucketed_lengths(rng, 32, 5, 40, 3)
        assert lens.min() >= 5 and lens.max() <= 40
        assert lens.max() - lens.min() <= 6


def test_held_out_sequences_are_never_trained_on():
    test = lab.make_test_set("reverse", [(2, 2)], 60, seed=0)
    exclude = test.exclusion()
    assert 30 < len(exclude) <= 60                  # of the 100 two-digit strings
    rng = np.random.default_rng(5)
    for _ in range(20):
        batch = lab.make_batch("reverse", [2] * 20, rng, exclude)
        for b in range(batch.size):
            assert np.array(digits_of(batch, b)[0], np.uint8).tobytes() not in exclude


def test_a_length_whose_every_sequence_is_held_out_is_refused():
    exclude = {np.array([d], np.uint8).tobytes() for d in range(10)}
    with pytest.raises(ValueError, match="held out"):
        lab.make_batch("copy", [1], np.random.default_rng(0), exclude)


def test_length_buckets_cover_the_range_without_gaps():
    assert lab.length_buckets(5, 40) == ((5, 10), (11, 15), (16, 20), (21, 25), (26, 30),
                                         (31, 35), (36, 40))
    assert lab.length_buckets(3, 6) == ((3, 6),)
    assert lab.length_buckets(5, 5) == ((5, 5),)
    b = lab.length_buckets(1, 23)
    assert b[0][0] == 1 and b[-1][1] == 23
    assert all(x[1] + 1 == y[0] for x, y in zip(b, b[1:]))


# ---------------------------------------------------------------------------- evaluation


def test_evaluate_counts_digits_and_whole_sequences(monkeypatch):
    test = lab.make_test_set("reverse", [(3, 4)], 4, seed=0)
    batch = test.batches[0]

    def fake(model, src, steps, src_len=None, keep_attention=False):
        pred = batch.tgt.copy()
        pred[0, 0] = lab.DIGIT0 + (pred[0, 0] - lab.DIGIT0 + 1) % 10   # one digit wrong
        pred[1, batch.tgt_len[1] - 1] = lab.DIGIT0                      # EOS missing
        return pred, None

    monkeypatch.setattr(lab.training, "greedy_decode", fake)
    (acc,) = lab.evaluate(None, test)
    digits = int((batch.tgt_len - 1).sum())
    assert acc.token_accuracy == pytest.approx((digits - 1) / digits)
    assert acc.sequence_accuracy == pytest.approx(2 / 4)
    assert (acc.lo, acc.hi, acc.n) == (3, 4, 4)


@pytest.mark.parametrize("task,digits,want", [
    ("reverse", [4, 1, 4], [2, 1, 0, None]),
    ("copy", [4, 1, 4], [0, 1, 2, None]),
    ("sort", [4, 1, 7], [1, 0, 2, None]),
    ("sort", [4, 1, 4], [1, None, None, None]),
])
def test_expected_alignment(task, digits, want):
    assert lab.expected_alignment(task, np.array(digits)) == want


# ---------------------------------------------------------------------------- experiments


def tiny_bottleneck(**kw):
    return lab.BottleneckSettings(train=TINY_TRAIN, hidden_dim=8, embed_dim=4, attn_dim=4,
                                  per_bucket=4, **kw)


@pytest.mark.parametrize("parallel", [False, True])
def test_bottleneck_reports_both_models_per_bucket_and_progress(parallel):
    events = []
    res = lab.bottleneck(tiny_bottleneck(parallel=parallel), on_progress=events.append)
    assert set(res.runs) == {"attention", "fixed"}
    assert res.buckets == ((3, 6),)
    for name in ("attention", "fixed"):
        run = res.runs[name]
        assert run.steps == 6 and len(run.curve.losses) == 6 and not run.interrupted
        assert len(run.accuracy) == 1 and 0 <= run.accuracy[0].token_accuracy <= 1
        assert run.model.config.decoder == name
        mine = [e for e in events if e.run == name]
        assert [e.phase for e in mine][-1] == "done"
        # 6 steps, a report every 10: after the first step and after the last
        assert [e.step for e in mine if e.phase == "train"] == [1, 6]
    # same sizes, steps, data and seed: only the decoder differs
    a, f = res.runs["attention"].model.config, res.runs["fixed"].model.config
    assert replace(a, decoder="fixed") == f
    assert not res.interrupted


def test_bottleneck_trains_the_same_models_in_threads_as_one_after_the_other():
    # the attention run cuts its batches in two (and takes the fixed run's core when that
    # one is done): the numbers must not depend on that, nor on the timing
    s = tiny_bottleneck()
    s = replace(s, train=replace(s.train, steps=12))
    serial, threads = (lab.bottleneck(replace(s, parallel=p)) for p in (False, True))
    for name in ("attention", "fixed"):
        np.testing.assert_array_equal(serial.runs[name].model.theta,
                                      threads.runs[name].model.theta)
        assert serial.runs[name].curve == threads.runs[name].curve
        assert serial.runs[name].accuracy == threads.runs[name].accuracy


def test_should_stop_ends_training_early_and_keeps_the_partial_result():
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    s = tiny_bottleneck(parallel=False)
    s = replace(s, train=replace(s.train, steps=1000))
    res = lab.bottleneck(s, should_stop=stop)
    assert res.interrupted
    assert res.runs["attention"].steps == 3 and res.runs["fixed"].steps == 0
    assert res.attention == res.fixed == []                  # a stop skips the evaluation too


def test_a_stop_during_evaluation_ends_it_between_buckets():
    test = lab.make_test_set("reverse", [(3, 4), (5, 6), (7, 8)], 4, seed=0)
    model = Seq2Seq.init(tiny_bottleneck().model_config("attention"), seed=0)
    polls = []

    def stop() -> bool:
        polls.append(1)
        return len(polls) > 1                                # after the first bucket

    part = lab.evaluate(model, test, stop)
    assert [(a.lo, a.hi) for a in part] == [(3, 4)]
    assert part == lab.evaluate(model, test)[:1]


def test_a_stop_after_training_marks_the_run_interrupted_and_skips_evaluation():
    stopping = []
    s = tiny_bottleneck(parallel=False)

    def on_progress(event) -> None:
        if event.phase == "evaluate":
            stopping.append(event.run)                       # cancel as evaluation starts

    res = lab.bottleneck(s, on_progress=on_progress, should_stop=lambda: bool(stopping))
    att = res.runs["attention"]
    assert att.steps == s.train.steps and att.accuracy == [] and att.interrupted
    assert res.runs["fixed"].steps == 0 and res.interrupted


def test_teacher_forcing_runs_each_ratio_from_the_same_start():
    s = lab.TeacherForcingSettings(train=TINY_TRAIN, hidden_dim=8, embed_dim=4, attn_dim=4,
                                   per_bucket=4, parallel=False)
    res = lab.teacher_forcing(s)
    assert list(res.runs) == ["ratio 1", "ratio 0"]
    assert [r.settings.teacher_forcing_ratio for r in res.runs.values()] == [1.0, 0.0]
    c1, c0 = res.curves()
    assert c1.losses[0] != c0.losses[0]             # same first batch, different decoder inputs
    assert len(c1.losses) == len(c0.losses) == 6


def test_alignment_of_a_model_has_labelled_rows_that_sum_to_one():
    s = lab.AlignmentSettings(train=TINY_TRAIN, hidden_dim=8, embed_dim=4, attn_dim=4)
    res = lab.alignment(s, digits=[3, 1, 4, 1, 5])
    assert res.weights.shape == (6, 6)
    np.testing.assert_allclose(res.weights.sum(axis=1), 1.0)
    assert res.col_labels == ["3", "1", "4", "1", "5", "</s>"]
    assert res.target == ["5", "1", "4", "1", "3", "</s>"]
    assert len(res.row_labels) == 6
    assert res.expected == [4, 3, 2, 1, 0, None]
    assert 0.0 <= res.argmax_match <= 1.0
    assert res.training is not None and res.training.steps == 6


def test_alignment_refuses_a_fixed_context_model():
    cfg = tiny_bottleneck().model_config("fixed")
    with pytest.raises(ValueError, match="attention"):
        lab.alignment_of(Seq2Seq.init(cfg), "reverse", [1, 2, 3])


def test_train_can_continue_a_model_and_evaluate_only():
    cfg = tiny_bottleneck().model_config("attention")
    events = []
    first = lab.train(cfg, TINY_TRAIN, per_bucket=4, on_progress=events.append)
    assert [e.phase for e in events][-2:] == ["evaluate", "done"] and events[-1].step == 6
    theta = first.model.theta.copy()
    again = lab.train(cfg, replace(TINY_TRAIN, steps=0), first.model, per_bucket=4)
    np.testing.assert_array_equal(again.model.theta, theta)
    assert again.steps == 0 and len(again.accuracy) == 1
    with pytest.raises(ValueError, match="config"):
        lab.train(replace(cfg, hidden_dim=9), TINY_TRAIN, first.model)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="task"):
        lab.TrainSettings(task="shuffle")
    with pytest.raises(ValueError, match="max_len"):
        lab.TrainSettings(min_len=10, max_len=5)
