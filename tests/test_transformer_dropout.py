"""Dropout in the lab's Transformer: the naive twin with the same masks, finite differences
with the masks held fixed, evaluation equal to p = 0, and p = 0 drawing nothing."""

from __future__ import annotations

import numpy as np
import pytest
import reference_transformer as naive
from test_transformer import BOS, one_layer_inputs, ragged_batch, tiny

from engine.transformer import Transformer, TransformerConfig, decoder_inputs, loss_and_grad
from engine.transformer.decode import greedy_decode
from engine.transformer.dropout import Dropout
from engine.transformer.network import forward

P = 0.3


def with_dropout(model: Transformer, p: float) -> Transformer:
    return Transformer(TransformerConfig(**{**model.config.to_dict(), "dropout": p}), model.theta)


def recorded_masks(model: Transformer, seed: int = 4) -> dict[str, np.ndarray]:
    drop = Dropout(model.config.dropout, np.random.default_rng(seed), model.config.np_dtype)
    loss_and_grad(model, ragged_batch(), rng=drop)
    return drop.masks


def test_masks_are_inverted_dropout_named_as_pytorchs_modules():
    model = tiny(dropout=P)
    masks = recorded_masks(model)
    layer = {"self_attn", "dropout1", "dropout", "dropout2"}
    want = {f"encoder.layers.{i}.{n}" for i in range(2) for n in layer}
    want |= {f"decoder.layers.{i}.{n}" for i in range(2)
             for n in layer | {"multihead_attn", "dropout3"}}
    assert set(masks) == want
    B, S, T = ragged_batch().src.shape[0], ragged_batch().src.shape[1], ragged_batch().tgt.shape[1]
    assert masks["encoder.layers.0.self_attn"].shape == (B * 2, S, S)
    assert masks["decoder.layers.1.multihead_attn"].shape == (B * 2, T, S)
    assert masks["decoder.layers.0.dropout"].shape == (B * T, 12)
    everything = np.concatenate([m.ravel() for m in masks.values()])
    assert set(np.unique(everything)) == {0.0, 1 / (1 - P)}
    assert abs((everything == 0).mean() - P) < 0.03           # ~2,700 draws


@pytest.mark.parametrize("kw", [{}, {"tie_embeddings": True}])
def test_loss_with_dropout_matches_the_naive_twin_given_the_same_masks(kw):
    model = tiny(dropout=P, **kw)
    b = ragged_batch()
    drop = Dropout(P, np.random.default_rng(0), np.float64)
    res, _ = loss_and_grad(model, b, 0.1, want_grad=False, rng=drop)
    want = naive.batch_loss(model.params, model.config, b.src, b.src_len, b.tgt, b.tgt_len, 0.1,
                            bos=BOS, masks=drop.masks)
    assert res.loss == pytest.approx(want, rel=1e-12)
    plain = naive.batch_loss(model.params, model.config, b.src, b.src_len, b.tgt, b.tgt_len, 0.1,
                             bos=BOS)
    assert abs(res.loss - plain) > 1e-3                      # the masks did something


def test_one_layer_with_dropout_matches_the_naive_layer():
    from engine.transformer.layers import decoder_layer, encoder_layer

    p, x, mem, enc, dec = one_layer_inputs()
    drop = Dropout(P, np.random.default_rng(9), np.float64)
    got = x.copy()
    encoder_layer(p, 0, got, *enc, drop)
    want, _ = naive.encoder_layer(p, 0, x, 2, drop.masks)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    assert np.abs(got - naive.encoder_layer(p, 0, x, 2)[0]).max() > 1e-2
    got = x.copy()
    decoder_layer(p, 0, got, mem, *dec, drop)
    want, _, _ = naive.decoder_layer(p, 0, x, mem, 2, drop.masks)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("kw", [{}, {"tie_embeddings": True}])
def test_every_gradient_with_fixed_masks_matches_central_differences(kw):
    model = tiny(dropout=P, **kw)
    b = ragged_batch()
    masks = recorded_masks(model)
    _, grad = loss_and_grad(model, b, 0.1, rng=Dropout.given(masks, np.float64))
    eps = 1e-6
    num = np.empty_like(grad)
    for i in range(model.theta.size):
        old = model.theta[i]
        model.theta[i] = old + eps
        up = loss_and_grad(model, b, 0.1, False, Dropout.given(masks, np.float64))[0].loss
        model.theta[i] = old - eps
        down = loss_and_grad(model, b, 0.1, False, Dropout.given(masks, np.float64))[0].loss
        model.theta[i] = old
        num[i] = (up - down) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-9)
    _, plain = loss_and_grad(model, b, 0.1)
    assert np.abs(grad - plain).max() > 1e-3


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_evaluation_and_decoding_equal_the_model_without_dropout(dtype):
    p0 = tiny(dtype=dtype)
    p3 = with_dropout(p0, P)
    b = ragged_batch()
    r0, g0 = loss_and_grad(p0, b, 0.1)
    r3, g3 = loss_and_grad(p3, b, 0.1)                       # no generator: evaluation
    assert r3.loss == r0.loss
    np.testing.assert_array_equal(g3, g0)
    np.testing.assert_array_equal(greedy_decode(p3, b.src, 6, b.src_len),
                                  greedy_decode(p0, b.src, 6, b.src_len))
    trained, _ = loss_and_grad(p3, b, 0.1, rng=np.random.default_rng(0))
    assert trained.loss != r0.loss


def test_p_zero_draws_nothing_and_changes_nothing():
    model = tiny()
    b = ragged_batch()
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    r1, g1 = loss_and_grad(model, b, 0.1, rng=rng)
    r0, g0 = loss_and_grad(model, b, 0.1)
    assert rng.bit_generator.state == before
    assert r1.loss == r0.loss
    np.testing.assert_array_equal(g1, g0)


def test_a_seeded_generator_gives_the_same_training_pass():
    model = tiny(dropout=P, dtype="float32")
    b = ragged_batch()
    r1, g1 = loss_and_grad(model, b, rng=np.random.default_rng(3))
    r2, g2 = loss_and_grad(model, b, rng=np.random.default_rng(3))
    r3, _ = loss_and_grad(model, b, rng=np.random.default_rng(4))
    assert g1.dtype == np.float32 and r1.loss == r2.loss and r1.loss != r3.loss
    np.testing.assert_array_equal(g1, g2)


@pytest.mark.parametrize("p", [1.0, 1.5, -0.1, float("nan")])
def test_dropout_outside_zero_to_one_is_refused_in_one_line(p):
    with pytest.raises(ValueError, match=r"^dropout: expected ") as err:
        TransformerConfig(dropout=p)
    assert "\n" not in str(err.value)


def test_pytorch_in_eval_mode_equals_our_evaluation_at_the_same_p():
    torch = pytest.importorskip("torch")
    from torch_transformer import make_twin

    from engine.transformer import torch_state_dict

    model = tiny(dropout=P)
    twin = make_twin(model.config)
    assert twin.encoder.layers[0].dropout1.p == P             # the twin really has dropout
    twin.load_state_dict({k: torch.from_numpy(v) for k, v in torch_state_dict(model).items()})
    twin.eval()
    b = ragged_batch()
    with torch.no_grad():
        want = twin(torch.from_numpy(b.src), torch.from_numpy(b.src_len),
                    torch.from_numpy(decoder_inputs(b.tgt))).numpy()
    got, _ = forward(model, b.src, b.src_len, decoder_inputs(b.tgt))
    real = np.arange(b.tgt.shape[1])[None, :] < b.tgt_len[:, None]
    np.testing.assert_allclose(got.reshape(want.shape)[real], want[real], rtol=1e-10, atol=1e-10)
