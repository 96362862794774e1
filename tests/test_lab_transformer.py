"""The Transformer lab experiment: schedule, head patterns, the runs it trains, stopping."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from engine.lab import BottleneckSettings, TrainSettings
from engine.lab.heads import CLEAR, head_maps, heads_of, patterns, shares
from engine.lab.transformer import (TransformerSettings, example_digits, learning_rate,
                                    same_data, transformer)
from engine.transformer import Transformer

TINY = TransformerSettings(train=TrainSettings(steps=12, min_len=3, max_len=12, batch_size=4,
                                               lr=1e-3, lr_final=0.1, max_grad_norm=1.0),
                           d_model=8, num_heads=2, d_ff=12, warmup_steps=4, per_bucket=4,
                           parallel=False)


# ---------------------------------------------------------------------------- schedule


def test_learning_rate_warms_up_linearly_then_decays_by_a_cosine():
    s = replace(TINY, train=replace(TINY.train, steps=14, lr=2e-3, lr_final=0.25), warmup_steps=4)
    assert [learning_rate(s, k) for k in range(4)] == pytest.approx([5e-4, 1e-3, 1.5e-3, 2e-3])
    assert learning_rate(s, 4) == pytest.approx(2e-3)                 # cosine at 0
    assert learning_rate(s, 13) == pytest.approx(2e-3 * 0.25)         # the last step
    mid = 4 + 9 / 2                                                    # half-way through 10 steps
    want = 2e-3 * (0.25 + 0.75 * 0.5 * (1 + math.cos(math.pi * 0.5)))
    assert (learning_rate(s, 8) + learning_rate(s, 9)) / 2 == pytest.approx(want, rel=0.02)
    assert mid == 8.5


# ---------------------------------------------------------------------------- head patterns


def test_patterns_name_the_columns_by_hand():
    # cross-attention on a reversal of 3 digits: rows = 3 digits + EOS, cols = 3 digits + EOS
    p = patterns("cross", 4, 4, [2, 1, 0, None])
    assert p["aligned"] == [(2,), (1,), (0,), ()]
    assert p["end"] == [(3,)] * 4
    assert p["same position"] == [(0,), (1,), (2,), ()]
    e = patterns("encoder", 4, 4, [])
    assert e["previous"] == [(), (0,), (1,), (2,)]
    assert e["next"] == [(1,), (2,), (3,), ()]
    assert e["mirror"] == [(2,), (1,), (0,), ()]
    d = patterns("decoder", 3, 3, [])
    assert d == {"self": [(0,), (1,), (2,)], "previous": [(), (0,), (1,)], "first": [(0,)] * 3}


def test_an_anti_diagonal_head_is_labelled_aligned_and_a_uniform_one_broad():
    anti = np.zeros((4, 4))
    anti[[0, 1, 2, 3], [2, 1, 0, 3]] = 1.0                  # EOS row looks at the EOS
    uniform = np.full((4, 4), 0.25)
    maps = {"encoder": [], "decoder": [], "cross": [np.stack([anti, uniform])]}
    a, u = head_maps(maps, [2, 1, 0, None])
    assert a.label == "aligned" and a.share == 1.0
    assert a.shares["end"] == 0.25 and a.shares["same position"] == 1 / 3
    assert u.label == "broad" and u.share < CLEAR
    assert u.entropy == pytest.approx(1.0) and a.entropy == pytest.approx(0.0)
    assert a.title == "cross-attention, layer 1, head 1" and u.head == 1


def test_decoder_entropy_counts_only_the_visible_steps():
    causal_uniform = np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None]
    (h,) = head_maps({"encoder": [], "decoder": [causal_uniform[None]], "cross": []}, [])
    assert h.entropy == pytest.approx(1.0)                   # uniform over what it may see
    assert h.shares["first"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert shares("decoder", causal_uniform, [])["previous"] == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_heads_of_a_model_cover_every_layer_and_head():
    model = Transformer.init(TINY.model_config(), seed=0)
    rep = heads_of(model, "reverse", [3, 1, 4])
    assert len(rep.heads) == 3 * 2 * 2                        # kinds × layers × heads
    assert rep.source == ["3", "1", "4", "</s>"] and rep.target == ["4", "1", "3", "</s>"]
    assert rep.decoder_in[0] == "<s>" and rep.decoder_in[1:] == rep.output[:-1]
    cross = rep.of("cross")
    assert all(h.weights.shape == (4, 4) for h in cross)
    assert rep.best("cross", "aligned") in cross
    eps = np.finfo(np.float32).eps                           # the lab computes in float32
    for h in rep.heads:                                      # a row sums to 1 within a few ulps
        np.testing.assert_allclose(h.weights.sum(1), 1.0, rtol=4 * eps)
    with pytest.raises(ValueError, match="digits"):
        heads_of(model, "reverse", [])


# ---------------------------------------------------------------------------- the experiment


def test_the_experiment_trains_both_runs_on_the_same_buckets():
    events = []
    res = transformer(TINY, on_progress=events.append)
    assert set(res.runs) == {"transformer", "no positions"}
    for run in res.runs.values():
        assert run.steps == 12 and not run.interrupted
        assert [(a.lo, a.hi) for a in run.accuracy] == list(res.buckets) == [(3, 10), (11, 12)]
        assert all(a.n == 4 for a in run.accuracy)
    assert res.heads is not None and len(res.heads.digits) == 12
    assert res.worst_bucket() in res.transformer
    phases = {(e.run, e.phase) for e in events}
    assert {("transformer", "done"), ("no positions", "done"), ("transformer", "train")} <= phases
    # 12 steps, a report every 10: after the first step (training has begun), the 10th, the last
    assert [e.step for e in events if e.run == "transformer" and e.phase == "train"] == [1, 10, 12]


def test_a_stop_request_before_the_first_step_gives_no_heads():
    res = transformer(TINY, should_stop=lambda: True)
    assert res.interrupted and res.heads is None
    assert all(r.steps == 0 for r in res.runs.values())


def stop_after_first_bucket():
    """(on_progress, should_stop): no stop until the first run starts evaluating; then its
    first bucket is scored and every later poll says stop (deterministic: no threads)."""
    state = {"evaluating": False, "polls": 0}

    def on_progress(event) -> None:
        if event.phase == "evaluate":
            state["evaluating"] = True

    def should_stop() -> bool:
        if not state["evaluating"]:
            return False
        state["polls"] += 1
        return state["polls"] > 1

    return on_progress, should_stop


def test_a_stop_during_evaluation_ends_it_between_buckets():
    full = transformer(TINY)
    on_progress, should_stop = stop_after_first_bucket()
    res = transformer(TINY, on_progress=on_progress, should_stop=should_stop)
    main, nopos = res.runs["transformer"], res.runs["no positions"]
    assert main.steps == 12 and main.interrupted and res.interrupted
    assert len(res.buckets) == 2
    assert main.accuracy == full.runs["transformer"].accuracy[:1]      # bucket 1 only, same score
    assert nopos.steps == 0 and nopos.accuracy == []                    # stopped before it began
    assert res.heads is not None                                        # the trained model's heads


def test_dropout_trains_differently_and_is_checked():
    with pytest.raises(ValueError, match=r"^dropout: expected a value in \[0, 1\), got 1.5$"):
        replace(TINY, dropout=1.5)
    plain = transformer(replace(TINY, positions_experiment=False))
    dropped = transformer(replace(TINY, positions_experiment=False, dropout=0.2))
    assert dropped.config.dropout == 0.2
    a, b = plain.runs["transformer"].curve.losses, dropped.runs["transformer"].curve.losses
    assert len(a) == len(b) == 12 and a[0] != b[0]
    again = transformer(replace(TINY, positions_experiment=False, dropout=0.2))
    assert again.runs["transformer"].curve.losses == b                  # seeded masks


def test_the_rnn_pair_trains_on_the_same_data_and_buckets():
    rnn = BottleneckSettings(train=TrainSettings(steps=3, batch_size=4), hidden_dim=4,
                             embed_dim=3, attn_dim=3, parallel=False)
    res = transformer(replace(TINY, positions_experiment=False), rnn=rnn)
    assert set(res.runs) == {"transformer", "attention", "fixed"}
    assert res.runs["fixed"].steps == 3
    assert [(a.lo, a.hi) for a in res.runs["attention"].accuracy] == list(res.buckets)
    same = same_data(rnn, TINY)
    assert (same.train.task, same.train.min_len, same.train.max_len) == ("reverse", 3, 12)
    assert same.train.steps == 3 and same.hidden_dim == 4


def test_the_example_is_seeded_and_inside_the_training_lengths():
    a = example_digits(TransformerSettings())
    assert a == example_digits(TransformerSettings()) and len(a) == 12
    assert all(0 <= x <= 9 for x in a)
    short = replace(TINY, train=replace(TINY.train, max_len=7))
    assert len(example_digits(short)) == 7                  # clipped to the longest training length


def test_the_lesson_counts_the_lab_models_parameters():
    from tutor.content import get_lesson

    text = get_lesson("transformer").body
    cfg = TransformerSettings().model_config()
    shapes = cfg.shapes()

    def count(prefix: str) -> int:
        return sum(int(np.prod(s)) for n, s in shapes.items() if n.startswith(prefix))

    for n in (count("encoder.layers.0."), count("decoder.layers.0."), cfg.n_params):
        assert f"{n:,}" in text, n
    assert (cfg.d_model, cfg.num_heads, cfg.d_ff, cfg.num_encoder_layers) == (64, 2, 64, 2)


def test_the_example_is_also_beam_decoded_through_the_decoding_engine():
    from engine.decoding import beam_search
    from engine.lab.tasks import EOS, TOKENS
    from engine.transformer.decode import step_function

    model = Transformer.init(TINY.model_config(), seed=1)
    rep = heads_of(model, "copy", [5, 2, 7])
    src = np.array([8, 5, 10, EOS])                         # digits + DIGIT0 (3), then EOS
    want = beam_search(step_function(model, src, TOKENS, EOS), rep.beam_width, 4).best
    assert rep.beam == list(want.words) and rep.beam_logp == pytest.approx(want.logp)
