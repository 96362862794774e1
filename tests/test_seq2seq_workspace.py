"""The training pass's workspace: reused views give the results of fresh arrays."""

from __future__ import annotations

import numpy as np
import pytest

from engine.seq2seq import Adam, Seq2Seq, Seq2SeqConfig, Workspace, greedy_decode, loss_and_grad, train_step
from engine.seq2seq.train import Batch
from engine.seq2seq.workspace import Work, work_shapes

V, BOS, EOS = 7, 1, 2


def batch(rng: np.random.Generator, lengths: list[int]) -> Batch:
    B, S = len(lengths), max(lengths)
    src = np.zeros((B, S), np.int64)
    for b, L in enumerate(lengths):
        src[b, :L - 1] = rng.integers(3, V, L - 1)
        src[b, L - 1] = EOS
    return Batch(src, np.array(lengths), src.copy(), np.array(lengths))


def poison(ws: Workspace, config: Seq2SeqConfig, B: int, S: int, T: int) -> None:
    """Fill every view the pass will get with NaN (int fields with a huge id)."""
    for arr in ws.work(config, B, S, T):
        arr[...] = np.iinfo(np.int64).max if arr.dtype == np.int64 else np.nan


@pytest.mark.parametrize("cell,decoder,bi", [("gru", "attention", True), ("gru", "fixed", False),
                                             ("rnn", "attention", False), ("rnn", "fixed", True)])
def test_a_dirty_reused_workspace_gives_the_results_of_a_fresh_one(cell, decoder, bi):
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=3, cell=cell,
                        decoder=decoder, bidirectional=bi)
    model = Seq2Seq.init(cfg, seed=5)
    ws = Workspace()
    for lengths in ([4, 2, 5], [3, 3], [6, 1, 2, 4]):
        b = batch(np.random.default_rng(len(lengths)), lengths)
        B, S = b.src.shape
        poison(ws, cfg, B, S, S)
        got, g_got = loss_and_grad(model, b, 0.5, 7, workspace=ws)
        want, g_want = loss_and_grad(model, b, 0.5, 7)
        assert got.loss == want.loss
        np.testing.assert_array_equal(g_got, g_want)
        np.testing.assert_array_equal(got.predictions, want.predictions)
        poison(ws, cfg, B, S, 3)
        p_got, a_got = greedy_decode(model, b.src, 3, b.src_len, keep_attention=True, workspace=ws)
        p_want, a_want = greedy_decode(model, b.src, 3, b.src_len, keep_attention=True)
        np.testing.assert_array_equal(p_got, p_want)
        np.testing.assert_array_equal(a_got, a_want)


def test_training_steps_reuse_one_buffer_and_results_do_not_alias_it():
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=3)
    model, twin = Seq2Seq.init(cfg, seed=1), Seq2Seq.init(cfg, seed=1)
    opt, opt_twin = Adam(cfg.n_params), Adam(cfg.n_params)
    ws = Workspace()
    b = batch(np.random.default_rng(0), [5, 3, 4])
    train_step(model, opt, b, 1.0, 0, ws)
    train_step(twin, opt_twin, b, 1.0, 0)           # fresh arrays at every step
    size = ws.nbytes
    _, grad = loss_and_grad(model, b, workspace=ws)
    seen = grad.copy()
    for k in range(1, 5):
        res = train_step(model, opt, b, 0.5, k, ws)
        want = train_step(twin, opt_twin, b, 0.5, k)
        assert res.loss == want.loss and res.grad_norm == want.grad_norm
        np.testing.assert_array_equal(model.theta, twin.theta)
    assert ws.nbytes == size                        # the same shape needs no new buffer
    ws_views = ws.work(cfg, 3, 5, 5)
    for arr in (grad, res.predictions, res.decoder_inputs):
        assert not any(np.shares_memory(arr, v) for v in ws_views)
    np.testing.assert_array_equal(grad, seen)       # later passes left it alone


def test_work_shapes_follow_the_config():
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=5, bidirectional=True)
    shapes = work_shapes(cfg, B=2, S=6, T=7)
    assert tuple(shapes) == Work._fields
    assert shapes["Hs"] == (2, 7, 2, 4) and shapes["Ann"] == (6, 2, 8)
    assert shapes["U"] == (7, 2, 6, 5) and shapes["gx"] == (2, 12) and shapes["EW"] == (V, 12)
    fixed = work_shapes(Seq2SeqConfig(vocab_size=V, decoder="fixed", cell="rnn"), B=2, S=6, T=7)
    assert fixed["U"] == (7, 2, 1, 1) and fixed["gx"] == (2, 64) and fixed["GX"] == (1, 6, 2, 64)


def sub_batch(b: Batch, lo: int, hi: int) -> Batch:
    return Batch(b.src[lo:hi], b.src_len[lo:hi], b.tgt[lo:hi], b.tgt_len[lo:hi])


@pytest.mark.parametrize("decoder", ["attention", "fixed"])
def test_a_batch_split_into_parts_adds_up_to_the_whole_batch(decoder):
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=3, decoder=decoder,
                        bidirectional=True)
    model = Seq2Seq.init(cfg, seed=2)
    b = batch(np.random.default_rng(3), [4, 2, 5, 3, 6])
    whole, g_whole = loss_and_grad(model, b, 1.0, 0)
    got, g_got = loss_and_grad(model, b, 1.0, 0, parts=2)   # rows 0-1 and 2-4
    # each part on its own is a batch whose loss is a mean over its own rows
    (a, g_a), (c, g_c) = (loss_and_grad(model, sub_batch(b, lo, hi), 1.0, 0)
                          for lo, hi in ((0, 2), (2, 5)))
    np.testing.assert_allclose(got.loss, (2 * a.loss + 3 * c.loss) / 5, rtol=1e-14)
    np.testing.assert_allclose(g_got, (2 * g_a + 3 * g_c) / 5, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.loss, whole.loss, rtol=1e-14)
    np.testing.assert_allclose(g_got, g_whole, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got.predictions, whole.predictions)
    np.testing.assert_array_equal(got.decoder_inputs, whole.decoder_inputs)


def test_parts_give_the_same_bits_with_or_without_a_pool_and_teacher_forcing_draws_match():
    from concurrent.futures import ThreadPoolExecutor

    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=3)
    b = batch(np.random.default_rng(4), [4, 2, 5, 3, 6, 2, 3])
    whole, _ = loss_and_grad(Seq2Seq.init(cfg, seed=2), b, 0.5, 0)
    models = [Seq2Seq.init(cfg, seed=2) for _ in range(2)]
    opts = [Adam(cfg.n_params) for _ in range(2)]
    works = [Workspace(), Workspace()]
    with ThreadPoolExecutor(2) as pool:
        for k in range(3):
            serial = train_step(models[0], opts[0], b, 0.5, k, works[0], parts=3)
            pooled = train_step(models[1], opts[1], b, 0.5, k, works[1], parts=3, pool=pool)
            assert serial.loss == pooled.loss and serial.grad_norm == pooled.grad_norm
            np.testing.assert_array_equal(models[0].theta, models[1].theta)
            np.testing.assert_array_equal(serial.decoder_inputs, pooled.decoder_inputs)
            if k == 0:                              # the same model and draws as one pass
                np.testing.assert_array_equal(serial.decoder_inputs, whole.decoder_inputs)
    assert works[1].nbytes > works[1].work(cfg, 2, 6, 6)[0].nbytes   # one buffer per part


def test_parts_are_checked():
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=3)
    b = batch(np.random.default_rng(0), [3, 2])
    with pytest.raises(ValueError, match="parts"):
        loss_and_grad(Seq2Seq.init(cfg, seed=0), b, parts=0)
    res, _ = loss_and_grad(Seq2Seq.init(cfg, seed=0), b, parts=5)  # more parts than rows
    assert res.predictions.shape == (2, 3)
