"""engine.attention_backward against the per-row Jacobian loops of tests/reference.py,
against finite differences of the engine's own forward, and (when installed) torch.autograd."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from engine.attention import attention
from engine.attention_backward import attention_backward

TOL = dict(rtol=1e-11, atol=1e-12)


def _inputs(rng, L, S, d_k, d_v, dtype=np.float64):
    return tuple(rng.normal(size=s).astype(dtype) for s in ((L, d_k), (S, d_k), (S, d_v), (L, d_v)))


def fd_grad(f, x, h=1e-3):
    """Fourth-order central differences of the scalar f at every entry of x (error ~h⁴)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        vals = []
        for step in (2 * h, h, -h, -2 * h):
            y = x.copy()
            y[idx] += step
            vals.append(f(y))
        g[idx] = (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * h)
    return g


@pytest.mark.parametrize("L,S,d_k,d_v", [(1, 1, 1, 1), (3, 5, 4, 2), (6, 2, 1, 3), (4, 4, 8, 8)])
def test_matches_reference_jacobian_loops(L, S, d_k, d_v):
    rng = np.random.default_rng(L * 100 + S)
    Q, K, V, dO = _inputs(rng, L, S, d_k, d_v)
    got = attention_backward(Q, K, V, None, dO)
    want = ref.attention_backward_2d(Q, K, V, None, dO)
    for g, w, name in zip(got, want, ("dQ", "dK", "dV", "d_weights")):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, **TOL, err_msg=name)


def test_masks_scale_and_a_fully_masked_row():
    rng = np.random.default_rng(5)
    Q, K, V, dO = _inputs(rng, 5, 7, 3, 2)
    mask = rng.random((5, 7)) < 0.6
    mask[2] = False                                         # query 3 sees nothing
    mask[:, 4] = False                                      # key 5 is padding
    for scale in (None, 0.3, 2.0):
        got = attention_backward(Q, K, V, mask, dO, scale=scale)
        want = ref.attention_backward_2d(Q, K, V, mask, dO, scale)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **TOL)
        assert np.all(got.dQ[2] == 0.0)                     # zero weights → zero gradient
        assert np.all(got.dK[4] == 0.0) and np.all(got.dV[4] == 0.0)
    nothing = attention_backward(Q, K, V, np.zeros((5, 7), bool), dO)
    assert not nothing.dQ.any() and not nothing.dK.any() and not nothing.dV.any()


def test_blas_path_matches_reference():
    # L·S·d_k = 128·128·16 = 2¹⁸ takes the BLAS kernel
    rng = np.random.default_rng(9)
    Q, K, V, dO = _inputs(rng, 128, 128, 16, 8)
    mask = rng.random((128, 128)) < 0.8
    mask[7] = False
    got = attention_backward(Q, K, V, mask, dO)
    want = ref.attention_backward_2d(Q, K, V, mask, dO)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("masked", [False, True])
def test_finite_differences_of_the_forward(masked):
    rng = np.random.default_rng(11 + masked)
    Q, K, V, dO = _inputs(rng, 4, 5, 3, 2)
    mask = (rng.random((4, 5)) < 0.7) if masked else None
    if masked:
        mask[1] = False
    loss = {  # L = Σ dO ⊙ out, so ∂L/∂out = dO
        "dQ": lambda x: float(np.sum(dO * attention(x, K, V, mask)[0])),
        "dK": lambda x: float(np.sum(dO * attention(Q, x, V, mask)[0])),
        "dV": lambda x: float(np.sum(dO * attention(Q, K, x, mask)[0])),
    }
    got = attention_backward(Q, K, V, mask, dO)
    for name, x in (("dQ", Q), ("dK", K), ("dV", V)):
        fd = fd_grad(loss[name], x)
        g = getattr(got, name)
        assert np.max(np.abs(g - fd)) <= 1e-8 * max(1.0, np.max(np.abs(fd))), name


def test_float32_stays_float32_and_is_close():
    rng = np.random.default_rng(3)
    Q, K, V, dO = _inputs(rng, 6, 9, 4, 3, np.float32)
    got = attention_backward(Q, K, V, None, dO)
    want = ref.attention_backward_2d(Q, K, V, None, dO)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_broadcast_batch_dims_sum_their_gradients():
    rng = np.random.default_rng(4)
    Q = rng.normal(size=(2, 3, 4, 5))                       # (B1, B2, L, d_k)
    K = rng.normal(size=(3, 6, 5))                          # shared over B1
    V = rng.normal(size=(6, 2))                             # shared by every batch
    dO = rng.normal(size=(2, 3, 4, 2))
    mask = rng.random((3, 4, 6)) < 0.7                      # (B2, L, S)
    got = attention_backward(Q, K, V, mask, dO)
    assert got.dQ.shape == Q.shape and got.dK.shape == K.shape and got.dV.shape == V.shape
    assert got.d_weights.shape == (2, 3, 4, 6)
    dK, dV = np.zeros(K.shape), np.zeros(V.shape)
    for a in range(2):
        for b in range(3):
            dq, dk, dv, dw = ref.attention_backward_2d(Q[a, b], K[b], V, mask[b], dO[a, b])
            np.testing.assert_allclose(got.dQ[a, b], dq, **TOL)
            np.testing.assert_allclose(got.d_weights[a, b], dw, **TOL)
            dK[b] += dk
            dV += dv
    np.testing.assert_allclose(got.dK, dK, **TOL)
    np.testing.assert_allclose(got.dV, dV, **TOL)


def test_moving_every_key_together_changes_nothing():
    # softmax ignores a constant added to a row of scores, and k_j + c adds scale·q_i·c to
    # every score of row i: so Σ_j ∂L/∂k_j = 0 (each row of the Jacobian sums to zero)
    rng = np.random.default_rng(8)
    Q, K, V, dO = _inputs(rng, 7, 6, 4, 3)
    g = attention_backward(Q, K, V, None, dO)
    np.testing.assert_allclose(g.dK.sum(axis=0), 0.0, atol=1e-12)


def test_saturated_scores_pass_almost_no_gradient():
    # q·k of ±1e4: α is one-hot to double precision, the Jacobian vanishes, dQ = dK = 0 exactly
    Q = np.array([[100.0, 0.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0]])
    V = np.array([[1.0], [2.0]])
    g = attention_backward(Q, K, V, None, np.array([[1.0]]))
    assert np.all(g.dQ == 0.0) and np.all(g.dK == 0.0)
    np.testing.assert_array_equal(g.dV, [[1.0], [0.0]])     # the chosen value gets all of dO
    np.testing.assert_array_equal(g.d_weights, [[1.0, 2.0]])


@pytest.mark.parametrize(("args", "message"), [
    ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), None, np.ones((2, 3))),
     r"^dO: expected shape \(2, 2\)"),
    ((np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 2)), None, np.ones((2, 2))), r"^K: expected shape"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((3, 4), bool), np.ones((2, 2))),
     r"^mask: expected a shape broadcastable"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), None, np.full((2, 2), np.nan)),
     r"^dO: contains NaN"),
])
def test_bad_input_names_the_argument(args, message):
    with pytest.raises(ValueError, match=message):
        attention_backward(*args)


def test_agrees_with_torch_autograd_to_1e_10():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(21)
    Q, K, V = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 3))
    dO = rng.normal(size=(2, 5, 3))
    mask = rng.random((2, 5, 7)) < 0.6
    mask[0, 3] = False                                      # a fully masked row
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(mask))
    out.backward(torch.tensor(dO))
    got = attention_backward(Q, K, V, mask, dO)
    for g, t in zip(got[:3], (tq, tk, tv)):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=0, atol=1e-10)
    assert math.isclose(float(np.abs(got.dQ[0, 3]).max()), 0.0)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(L=st.integers(1, 5), S=st.integers(1, 6), d_k=st.integers(1, 4), d_v=st.integers(1, 3),
       seed=st.integers(0, 2**31 - 1), spread=st.sampled_from([0.1, 1.0, 30.0]))
def test_property_equals_the_reference_and_key_gradients_cancel(L, S, d_k, d_v, seed, spread):
    rng = np.random.default_rng(seed)
    Q, K, V, dO = _inputs(rng, L, S, d_k, d_v)
    Q *= spread                                             # from flat to saturated softmaxes
    mask = rng.random((L, S)) < 0.7
    got = attention_backward(Q, K, V, mask, dO)
    want = ref.attention_backward_2d(Q, K, V, mask, dO)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)
    # each row of ∂L/∂s sums to zero, so moving every key by the same vector changes nothing
    # among the keys a query may see: Σ_j over allowed keys of ds_ij = 0 → Σ_j dK_j = 0
    np.testing.assert_allclose(got.dK.sum(axis=0), 0.0, atol=1e-9 * max(1.0, spread))
