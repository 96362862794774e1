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
    for name, arr in zip(Work._fields, ws.work(config, B, S, T)):
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
    assert shapes["Hs"] == (2, 7, 2, 4) and shapes["Ann"] == (7, 2, 8)
    assert shapes["U"] == (7, 2, 6, 5) and shapes["gx"] == (2, 12)
    fixed = work_shapes(Seq2SeqConfig(vocab_size=V, decoder="fixed", cell="rnn"), B=2, S=6, T=7)
    assert fixed["U"] == (7, 2, 1, 1) and fixed["gx"] == (2, 64)
