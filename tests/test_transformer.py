"""The lab's numba Transformer: naive twin, finite differences, PyTorch, decoding, positions."""

from __future__ import annotations

import numpy as np
import pytest
import reference_transformer as naive
from test_seq2seq import ragged_batch as seq2seq_batch

from engine.decoding import beam_search, score_sequence
from engine.decoding import greedy_decode as engine_greedy
from engine.seq2seq import Batch
from engine.transformer import (
    Transformer,
    TransformerConfig,
    decoder_inputs,
    loss_and_grad,
    make_optimizer,
    torch_state_dict,
    train_step,
)
from engine.transformer.decode import attention_maps, greedy_decode, step_function
from engine.transformer.network import forward

V = 9
BOS, EOS = 1, 2


def tiny(seed=3, **kw) -> Transformer:
    opts = dict(vocab_size=V, d_model=8, num_heads=2, d_ff=12, num_encoder_layers=2,
                num_decoder_layers=2, max_len=12)
    opts.update(kw)
    return Transformer.init(TransformerConfig(**opts), seed=seed)


def ragged_batch(seed=1) -> Batch:
    """Three sequences of different source and target lengths (one source of length 1)."""
    return seq2seq_batch(seed, vocab=V)


VARIANTS = [
    {},
    {"tie_embeddings": True},
    {"positions": "none", "scale_embeddings": False},
    {"num_encoder_layers": 1, "num_decoder_layers": 1, "num_heads": 1},
    {"num_heads": 4, "d_model": 8},
]


# ---------------------------------------------------------------------------- naive twin


@pytest.mark.parametrize("kw", VARIANTS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_loss_matches_the_naive_twin_sequence_by_sequence(kw, smoothing):
    model = tiny(**kw)
    b = ragged_batch()
    res, _ = loss_and_grad(model, b, smoothing, want_grad=False)
    want = naive.batch_loss(model.params, model.config, b.src, b.src_len, b.tgt, b.tgt_len,
                            smoothing, bos=BOS)
    assert res.loss == pytest.approx(want, rel=1e-12)


def one_layer_inputs():
    """Layer 0's parameters, one sequence x (5, 8), a memory (4, 8), and the engine's
    (shape, mask) arguments of an encoder layer and of a decoder layer on them."""
    from engine.transformer.layers import Shape
    from engine.transformer.network import causal_mask_heads, key_mask

    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 8))                  # one sequence of 5 rows
    mem = rng.standard_normal((4, 8))
    enc = (Shape(1, 5, 5, 2, 8), key_mask(np.array([5]), 2, 5, 5))
    dec = (Shape(1, 5, 5, 2, 8), causal_mask_heads(1, 2, 5), Shape(1, 5, 4, 2, 8),
           key_mask(np.array([4]), 2, 5, 4))
    return tiny().params, x, mem, enc, dec


def test_one_layer_matches_the_naive_layers():
    """The engine's encoder layer 0 and decoder layer 0 against the twin's, row by row."""
    from engine.transformer.layers import decoder_layer, encoder_layer

    p, x, mem, enc, dec = one_layer_inputs()
    want_x, want_w = naive.encoder_layer(p, 0, x, 2)
    got = x.copy()
    cache = encoder_layer(p, 0, got, *enc)
    np.testing.assert_allclose(got, want_x, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(cache[0][2][3], want_w, rtol=1e-12, atol=1e-14)
    want_y, _, want_cross = naive.decoder_layer(p, 0, x, mem, 2)
    got = x.copy()
    cache = decoder_layer(p, 0, got, mem, *dec)
    np.testing.assert_allclose(got, want_y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(cache[1][2][3], want_cross, rtol=1e-12, atol=1e-14)


def test_padding_does_not_change_a_sequences_loss_gradient_or_logits():
    model = tiny()
    b = ragged_batch()
    _, g_all = loss_and_grad(model, b)
    n_tokens = b.tgt_len.sum()
    total = np.zeros_like(g_all)
    logits, _ = forward(model, b.src, b.src_len, decoder_inputs(b.tgt))
    logits = logits.reshape(3, b.tgt.shape[1], V)
    for i in range(3):
        one = Batch(b.src[i:i + 1, :b.src_len[i]], b.src_len[i:i + 1],
                    b.tgt[i:i + 1, :b.tgt_len[i]], b.tgt_len[i:i + 1])
        total += loss_and_grad(model, one)[1] * b.tgt_len[i] / n_tokens   # mean over tokens
        alone, _ = forward(model, one.src, one.src_len, decoder_inputs(one.tgt))
        np.testing.assert_allclose(logits[i, :b.tgt_len[i]], alone, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(g_all, total, rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("kw", VARIANTS[:4])
def test_every_gradient_matches_central_differences(kw):
    """Float64 backward against (L(θ+ε) − L(θ−ε)) / 2ε for every parameter, on a ragged batch
    with label smoothing, so padding, tying and both attention masks are all exercised."""
    model = tiny(**kw)
    b = ragged_batch()
    _, grad = loss_and_grad(model, b, 0.1)
    eps = 1e-6
    num = np.empty_like(grad)
    for i in range(model.theta.size):
        old = model.theta[i]
        model.theta[i] = old + eps
        up = loss_and_grad(model, b, 0.1, want_grad=False)[0].loss
        model.theta[i] = old - eps
        down = loss_and_grad(model, b, 0.1, want_grad=False)[0].loss
        model.theta[i] = old
        num[i] = (up - down) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-9)
    g = model.views(grad)
    for name, arr in g.items():        # every parameter really receives a gradient
        assert np.abs(arr).max() > 0, name


def test_float32_gradients_agree_with_float64():
    m64 = tiny()
    m32 = Transformer(TransformerConfig(**{**m64.config.to_dict(), "dtype": "float32"}),
                      m64.theta.astype(np.float32))
    b = ragged_batch()
    r64, g64 = loss_and_grad(m64, b)
    r32, g32 = loss_and_grad(m32, b)
    assert g32.dtype == np.float32
    assert r32.loss == pytest.approx(r64.loss, rel=1e-5)
    np.testing.assert_allclose(g32, g64, rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------------------- PyTorch


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 2e-4)])
@pytest.mark.parametrize("kw", [{}, {"tie_embeddings": True},
                                {"positions": "none", "scale_embeddings": False}])
def test_logits_loss_and_gradients_equal_pytorch(dtype, tol, kw):
    torch = pytest.importorskip("torch")
    from torch_transformer import make_twin, padded_targets

    model = tiny(dtype=dtype, **kw)
    twin = make_twin(model.config)
    state = {k: torch.from_numpy(v) for k, v in torch_state_dict(model).items()}
    assert set(state) == set(twin.state_dict())             # the documented names, all of them
    twin.load_state_dict(state)
    b = ragged_batch()
    res, grad = loss_and_grad(model, b, 0.1)
    t = padded_targets(b.tgt, b.tgt_len)
    logits = twin(torch.from_numpy(b.src), torch.from_numpy(b.src_len),
                  torch.from_numpy(decoder_inputs(b.tgt)))
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), t.reshape(-1),
                                             label_smoothing=0.1)
    loss.backward()
    assert res.loss == pytest.approx(loss.item(), rel=tol)
    ours = torch_state_dict(Transformer(model.config, grad))
    for name, p in twin.named_parameters():
        want = p.grad.double().numpy()
        np.testing.assert_allclose(ours[name], want, rtol=tol, atol=tol * np.abs(want).max(),
                                   err_msg=name)


# ---------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cached_greedy_decoding_equals_the_full_pass_on_its_own_output(dtype):
    model = tiny(dtype=dtype)
    b = ragged_batch()
    pred = greedy_decode(model, b.src, 7, b.src_len)
    tgt_in = np.concatenate([np.full((3, 1), BOS), pred[:, :-1]], axis=1)
    logits, _ = forward(model, b.src, b.src_len, tgt_in)
    np.testing.assert_array_equal(logits.reshape(3, 7, V).argmax(-1), pred)


def test_step_model_drives_the_decoding_engine():
    model = tiny()
    b = ragged_batch()
    pred = greedy_decode(model, b.src, 6, b.src_len)
    for i in range(3):
        sm = step_function(model, b.src[i, :b.src_len[i]])
        got = engine_greedy(sm, 6)
        assert list(got.hypothesis.tokens) == list(pred[i])
        one = beam_search(sm, beam_width=1, max_length=6)
        assert list(one.best.tokens) == list(pred[i])
        wide = beam_search(sm, beam_width=3, max_length=6)
        total, _ = score_sequence(sm, wide.best.tokens)
        assert wide.best.logp == pytest.approx(total)           # its score is its own sequence's


def test_attention_maps_are_the_weights_of_one_sequence():
    model = tiny()
    src = np.array([4, 5, 6, EOS])
    tgt_in = np.array([BOS, 6, 5])
    logp, maps = attention_maps(model, src, tgt_in)
    assert logp.shape == (3, V)
    np.testing.assert_allclose(np.exp(logp).sum(1), 1.0)
    assert [w.shape for w in maps["encoder"]] == [(2, 4, 4)] * 2
    assert [w.shape for w in maps["decoder"]] == [(2, 3, 3)] * 2
    assert [w.shape for w in maps["cross"]] == [(2, 3, 4)] * 2
    for w in maps["decoder"]:
        assert np.all(np.triu(w[0], 1) == 0) and np.all(np.triu(w[1], 1) == 0)   # causal
    p = model.params
    x = naive.embed(p["src_embed.weight"], list(src), True)
    _, want = naive.encoder_layer(p, 0, x, 2)
    np.testing.assert_allclose(maps["encoder"][0], want, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------- positions


def test_without_positions_the_source_order_cannot_matter():
    """Self-attention and the position-wise blocks commute with a permutation of the source,
    so without positional encodings a shuffled source gives the decoder the same input."""
    rng = np.random.default_rng(0)
    src = np.array([[3, 4, 5, 6, 7, EOS]])
    perm = src[:, rng.permutation(6)]
    tgt_in = np.array([[BOS, 7, 6, 5]])
    lens = np.array([6])
    none = tiny(positions="none")
    a, _ = forward(none, src, lens, tgt_in)
    b, _ = forward(none, perm, lens, tgt_in)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    sin = Transformer(TransformerConfig(**{**none.config.to_dict(), "positions": "sinusoidal"}),
                      none.theta)
    a, _ = forward(sin, src, lens, tgt_in)
    b, _ = forward(sin, perm, lens, tgt_in)
    assert np.abs(a - b).max() > 1e-3


# ---------------------------------------------------------------------------- model records


def test_arrays_round_trip_and_bad_records_are_named():
    model = tiny(tie_embeddings=True)
    again = Transformer.from_arrays(model.config, model.to_arrays())
    np.testing.assert_array_equal(again.theta, model.theta)
    arrays = model.to_arrays()
    arrays["decoder.norm.bias"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"decoder.norm.bias: expected shape \(8,\)"):
        Transformer.from_arrays(model.config, arrays)
    del arrays["decoder.norm.bias"]
    with pytest.raises(ValueError, match="decoder.norm.bias: missing"):
        Transformer.from_arrays(model.config, arrays)


def test_config_checks_its_sizes():
    with pytest.raises(ValueError, match="num_heads: d_model = 10 is not divisible"):
        TransformerConfig(d_model=10, num_heads=4)
    with pytest.raises(ValueError, match="positions"):
        TransformerConfig(positions="learned")
    with pytest.raises(ValueError, match="max_len = 12"):
        loss_and_grad(tiny(), Batch(np.full((1, 13), 3), [13], np.full((1, 2), 3), [2]))


def test_initialisation_follows_the_documented_distributions():
    model = Transformer.init(TransformerConfig(d_model=64, d_ff=128), seed=0)
    p = model.params
    assert p["src_embed.weight"].std() == pytest.approx(64 ** -0.5, rel=0.05)
    bound = np.sqrt(6 / (3 * 64 + 64))                        # Xavier over (3d, d)
    w = p["encoder.layers.0.self_attn.in_proj_weight"]
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert (p["encoder.layers.1.norm2.weight"] == 1).all() and (p["decoder.norm.bias"] == 0).all()
    assert (p["decoder.layers.0.multihead_attn.out_proj.bias"] == 0).all()
    for name, fan_in in (("decoder.layers.1.linear1", 64), ("decoder.layers.1.linear2", 128)):
        for part in ("weight", "bias"):                        # nn.Linear: U(±1/√fan_in)
            x = np.abs(p[f"{name}.{part}"]).max()
            assert 0.9 / np.sqrt(fan_in) < x <= 1 / np.sqrt(fan_in)


def test_training_steps_lower_the_loss_on_a_copy_task():
    model = tiny(seed=0)
    rng = np.random.default_rng(0)
    opt = make_optimizer(model, lr=3e-3)
    x = rng.integers(3, V, (16, 4))
    batch = Batch(np.concatenate([x, np.full((16, 1), EOS)], 1), np.full(16, 5),
                  np.concatenate([x, np.full((16, 1), EOS)], 1), np.full(16, 5))
    first = train_step(model, opt, batch).loss
    for _ in range(60):
        last = train_step(model, opt, batch)
    assert last.loss < 0.5 * first
    assert np.isfinite(last.grad_norm) and last.grad_norm > 0
