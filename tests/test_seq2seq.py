"""The lab's numba seq2seq: gradients, a naive twin, teacher forcing, decoding, Adam."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.seq2seq import (
    Adam,
    Batch,
    Seq2Seq,
    Seq2SeqConfig,
    greedy_decode,
    loss_and_grad,
    step_function,
    train_step,
)

V = 7
BOS, EOS = 1, 2
KINDS = list(itertools.product(("gru", "rnn"), ("attention", "fixed"), (False, True)))


def tiny(cell="gru", decoder="attention", bidirectional=False, seed=3, **kw) -> Seq2Seq:
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=3, hidden_dim=4, attn_dim=3, cell=cell,
                        decoder=decoder, bidirectional=bidirectional, **kw)
    return Seq2Seq.init(cfg, seed=seed)


def ragged_batch(seed=1, vocab=V) -> Batch:
    """Three sequences of different source and target lengths (one of length 1), padded."""
    rng = np.random.default_rng(seed)
    src_len, tgt_len = np.array([5, 3, 1]), np.array([6, 2, 4])
    src = rng.integers(3, vocab, (3, 5))
    tgt = rng.integers(3, vocab, (3, 6))
    for b in range(3):
        src[b, src_len[b]:] = 0
        tgt[b, tgt_len[b]:] = 0
        tgt[b, tgt_len[b] - 1] = EOS
    return Batch(src, src_len, tgt, tgt_len)


# ---------------------------------------------------------------------------- naive twin


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _cell(p, prefix, x_part, h, cell):
    """One step of the cell for a single sequence; x_part = the input side, W_x x + b_x."""
    gh = h @ p[f"{prefix}_W_h"] + p[f"{prefix}_b_h"]
    if cell == "rnn":
        return np.tanh(x_part + gh)
    d = h.size
    r = _sig(x_part[:d] + gh[:d])
    z = _sig(x_part[d:2 * d] + gh[d:2 * d])
    n = np.tanh(x_part[2 * d:] + r * gh[2 * d:])
    return (1 - z) * n + z * h


def naive_loss(model: Seq2Seq, src, tgt, dec_in) -> float:
    """Cross-entropy summed over the target of ONE unpadded sequence, decoder fed ``dec_in``."""
    c = model.config
    p = {k: v for k, v in model.params.items()}
    d = c.hidden_dim
    X = p["enc_embed"][src]                                   # (S, e)
    fwd, h = [], np.zeros(d)
    for x in X:
        h = _cell({"enc_W_h": p["enc_W_h"], "enc_b_h": p["enc_b_h"]}, "enc",
                  x @ p["enc_W_x"] + p["enc_b_x"], h, c.cell)
        fwd.append(h)
    H = np.array(fwd)                                         # (S, d)
    C = fwd[-1]
    if c.bidirectional:
        bwd, h = [None] * len(src), np.zeros(d)
        for t in range(len(src) - 1, -1, -1):
            h = _cell({"enc_W_h": p["enc_W_h_rev"], "enc_b_h": p["enc_b_h_rev"]}, "enc",
                      X[t] @ p["enc_W_x_rev"] + p["enc_b_x_rev"], h, c.cell)
            bwd[t] = h
        H = np.concatenate([H, np.array(bwd)], axis=1)        # (S, 2d)
        C = np.concatenate([fwd[-1], bwd[0]])
    s = fwd[-1].copy()
    loss = 0.0
    for t, y in enumerate(tgt):
        if c.decoder == "attention":
            e = np.tanh(s @ p["att_W_q"] + H @ p["att_W_k"]) @ p["att_v"]   # (S,)
            a = np.exp(e - e.max())
            a /= a.sum()
            ctx = a @ H
        else:
            ctx = C
        xp = p["dec_embed"][dec_in[t]] @ p["dec_W_y"] + ctx @ p["dec_W_c"] + p["dec_b_x"]
        s = _cell(p, "dec", xp, s, c.cell)
        z = s @ p["out_W"] + p["out_b"]
        loss -= z[y] - (z.max() + np.log(np.exp(z - z.max()).sum()))
    return loss


@pytest.mark.parametrize("cell,decoder,bi", KINDS)
def test_loss_matches_the_naive_twin_on_a_ragged_batch(cell, decoder, bi):
    model = tiny(cell, decoder, bi)
    batch = ragged_batch()
    res, _ = loss_and_grad(model, batch, teacher_forcing_ratio=0.5, rng=4, want_grad=False)
    want = sum(
        naive_loss(model, batch.src[b, :batch.src_len[b]], batch.tgt[b, :batch.tgt_len[b]],
                   res.decoder_inputs[b, :batch.tgt_len[b]])
        for b in range(3)
    ) / 3
    assert res.loss == pytest.approx(want, rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("cell,decoder,bi", KINDS)
def test_every_gradient_matches_central_differences(cell, decoder, bi):
    """Float64 BPTT against (L(θ+ε) − L(θ−ε)) / 2ε for every parameter, with padding and a
    teacher-forcing ratio of 0.5 (the sampled inputs are fixed by the seed)."""
    model = tiny(cell, decoder, bi)
    batch = ragged_batch()
    _, grad = loss_and_grad(model, batch, 0.5, rng=5)
    eps = 1e-6
    num = np.empty_like(grad)
    for i in range(model.theta.size):
        old = model.theta[i]
        model.theta[i] = old + eps
        up = loss_and_grad(model, batch, 0.5, rng=5, want_grad=False)[0].loss
        model.theta[i] = old - eps
        down = loss_and_grad(model, batch, 0.5, rng=5, want_grad=False)[0].loss
        model.theta[i] = old
        num[i] = (up - down) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-7)
    # every parameter slot really is exercised (a zero gradient everywhere would be suspect)
    for k, (name, arr) in enumerate(model.params.items()):
        if arr.size:
            lo, hi = model._offs[k], model._offs[k + 1]
            assert np.abs(grad[lo:hi]).max() > 0, name


def test_padding_does_not_change_a_sequences_loss_or_gradient():
    model = tiny("gru", "attention", True)
    batch = ragged_batch()
    _, g_all = loss_and_grad(model, batch, 1.0)
    total = np.zeros_like(g_all)
    for b in range(3):
        one = Batch(batch.src[b:b + 1, :batch.src_len[b]], batch.src_len[b:b + 1],
                    batch.tgt[b:b + 1, :batch.tgt_len[b]], batch.tgt_len[b:b + 1])
        total += loss_and_grad(model, one, 1.0)[1]
    np.testing.assert_allclose(g_all, total / 3, rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------------------- teacher forcing


def test_ratio_one_feeds_the_targets_and_ratio_zero_the_predictions():
    model = tiny()
    batch = ragged_batch()
    tf, _ = loss_and_grad(model, batch, 1.0, rng=0, want_grad=False)
    assert (tf.decoder_inputs[:, 0] == BOS).all()
    np.testing.assert_array_equal(tf.decoder_inputs[:, 1:], batch.tgt[:, :-1])
    fr, _ = loss_and_grad(model, batch, 0.0, rng=0, want_grad=False)
    assert (fr.decoder_inputs[:, 0] == BOS).all()
    np.testing.assert_array_equal(fr.decoder_inputs[:, 1:], fr.predictions[:, :-1])
    # free running is exactly greedy decoding
    greedy, _ = greedy_decode(model, batch.src, batch.tgt.shape[1], batch.src_len)
    np.testing.assert_array_equal(fr.predictions, greedy)


def test_an_intermediate_ratio_mixes_per_step_and_is_seeded():
    model = tiny()
    rng = np.random.default_rng(0)
    src = rng.integers(3, V, (64, 6))
    tgt = rng.integers(3, V, (64, 12))
    batch = Batch(src, np.full(64, 6), tgt, np.full(64, 12))
    a, _ = loss_and_grad(model, batch, 0.3, rng=9, want_grad=False)
    b, _ = loss_and_grad(model, batch, 0.3, rng=9, want_grad=False)
    np.testing.assert_array_equal(a.decoder_inputs, b.decoder_inputs)
    truth = a.decoder_inputs[:, 1:] == tgt[:, :-1]
    own = a.decoder_inputs[:, 1:] == a.predictions[:, :-1]
    assert (truth | own).all()                      # every input is one or the other
    coins = np.random.default_rng(9).random((12, 64)).T[:, 1:] < 0.3
    np.testing.assert_array_equal(a.decoder_inputs[:, 1:][coins], tgt[:, :-1][coins])
    assert 0.2 < coins.mean() < 0.4


def test_ratio_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="teacher_forcing_ratio"):
        loss_and_grad(tiny(), ragged_batch(), 1.5)


# ---------------------------------------------------------------------------- training


def _reverse_batch(rng, B=16, L=4):
    x = rng.integers(3, V, (B, L))
    src = np.concatenate([x, np.full((B, 1), EOS)], axis=1)
    tgt = np.concatenate([x[:, ::-1], np.full((B, 1), EOS)], axis=1)
    return Batch(src, np.full(B, L + 1), tgt, np.full(B, L + 1))


@pytest.mark.parametrize("decoder", ["attention", "fixed"])
def test_a_tiny_training_run_reduces_the_loss(decoder):
    cfg = Seq2SeqConfig(vocab_size=V, embed_dim=8, hidden_dim=16, attn_dim=8, decoder=decoder,
                        bidirectional=True)
    model = Seq2Seq.init(cfg, seed=0)
    opt = Adam(cfg.n_params, lr=1e-2)
    rng = np.random.default_rng(0)
    held_out = _reverse_batch(np.random.default_rng(99), B=64)
    before = loss_and_grad(model, held_out, want_grad=False)[0].loss
    for _ in range(150):
        train_step(model, opt, _reverse_batch(rng), 1.0, rng)
    after = loss_and_grad(model, held_out, want_grad=False)[0].loss
    assert after < 0.5 * before


def test_adam_step_follows_the_formula_and_clips_the_global_norm():
    theta = np.array([1.0, -2.0, 0.5])
    grad = np.array([3.0, 4.0, 0.0])                # norm 5
    opt = Adam(3, lr=0.1, betas=(0.9, 0.99), eps=1e-8, max_grad_norm=1.0)
    norm = opt.step(theta, grad.copy())
    assert norm == pytest.approx(5.0)
    g = grad / 5.0                                  # clipped to norm 1
    m, v = 0.1 * g, 0.01 * g * g
    want = np.array([1.0, -2.0, 0.5]) - 0.1 * (m / 0.1) / (np.sqrt(v / 0.01) + 1e-8)
    np.testing.assert_allclose(theta, want, rtol=1e-12)


def test_initialisation_is_seeded_and_sizes_are_checked():
    a, b, c = tiny(seed=1), tiny(seed=1), tiny(seed=2)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert not np.array_equal(a.theta, c.theta)
    with pytest.raises(ValueError, match="cell"):
        Seq2SeqConfig(cell="lstm")
    with pytest.raises(ValueError, match="theta"):
        Seq2Seq(a.config, a.theta[:-1])
    with pytest.raises(ValueError, match="src_len"):
        bad = ragged_batch()
        loss_and_grad(a, Batch(bad.src, np.array([6, 3, 1]), bad.tgt, bad.tgt_len))


def test_arrays_round_trip_and_a_wrong_shape_is_named():
    m = tiny("rnn", "attention", True)
    back = Seq2Seq.from_arrays(m.config, m.to_arrays())
    np.testing.assert_array_equal(back.theta, m.theta)
    arrays = m.to_arrays()
    arrays["dec_W_c"] = arrays["dec_W_c"][:4]
    with pytest.raises(ValueError, match=r"dec_W_c: expected shape \(8, 4\)"):
        Seq2Seq.from_arrays(m.config, arrays)


# ---------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("decoder", ["attention", "fixed"])
def test_step_function_reproduces_batched_greedy_decoding(decoder):
    model = tiny(decoder=decoder, bidirectional=True, seed=7)
    src = np.array([4, 5, 6, 3, EOS])
    want, alpha = greedy_decode(model, src, 6, keep_attention=True)
    sm = step_function(model, src)
    state, tok, got, rows = sm.initial_state, sm.bos_token, [], []
    for _ in range(6):
        lp, state = sm.step(state, tok)
        assert np.exp(lp).sum() == pytest.approx(1.0)
        tok = int(np.argmax(lp))
        got.append(tok)
        rows.append(state.attention)
    np.testing.assert_array_equal(got, want[0])
    np.testing.assert_allclose(np.array(rows), alpha[0], atol=1e-14)
    if decoder == "attention":
        np.testing.assert_allclose(alpha[0].sum(axis=1), 1.0)
    else:
        assert not alpha.any()


def test_the_decoding_engine_drives_the_step_function():
    from engine.decoding import beam_search
    from engine.decoding import greedy_decode as engine_greedy

    model = tiny(bidirectional=True, seed=11)
    src = np.array([3, 4, 5, 6, EOS])
    vocab = ("<pad>", "<s>", "</s>", "a", "b", "c", "d")
    sm = step_function(model, src, vocab, eos_token=EOS)
    ours, _ = greedy_decode(model, src, 8)
    res = engine_greedy(sm, max_length=8)
    toks = list(res.hypothesis.tokens)
    n = len(toks)
    assert toks == list(ours[0, :n])                # same tokens until EOS or the limit
    if n < 8:
        assert toks[-1] == EOS
    beam1 = beam_search(sm, beam_width=1, max_length=8)
    assert list(beam1.best.tokens) == toks
    beam3 = beam_search(sm, beam_width=3, max_length=8)
    state, tok, logp = sm.initial_state, sm.bos_token, 0.0
    for y in beam3.best.tokens:                     # re-score the best beam step by step
        lp, state = sm.step(state, tok)
        logp += lp[y]
        tok = y
    assert beam3.best.logp == pytest.approx(logp, abs=1e-9)
