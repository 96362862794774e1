"""Multi-head and additive attention backward: naive twins, finite differences, torch."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from engine.additive_attention import additive_attention, additive_attention_backward
from engine.attention import multi_head_attention
from engine.attention_backward import multi_head_attention_backward
from test_attention_backward import fd_grad

TOL = dict(rtol=1e-11, atol=1e-12)
MHA_NAMES = ("dX_q", "dX_kv", "dW_Q", "dW_K", "dW_V", "dW_O", "d_weights")
ADD_NAMES = ("dQ", "dK", "dV", "dW_q", "dW_k", "dv", "d_weights")


def _mha_inputs(rng, L=4, S=5, d_in=3, d_model=6, d_out=2):
    return (rng.normal(size=(L, d_in)), rng.normal(size=(S, d_in)),
            *(rng.normal(size=(d_in, d_model)) for _ in range(3)), rng.normal(size=(d_model, d_out)),
            rng.normal(size=(L, d_out)))


@pytest.mark.parametrize("heads", [1, 2, 3])
@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_matches_the_per_head_reference(heads, masked):
    rng = np.random.default_rng(heads * 10 + masked)
    Xq, Xkv, WQ, WK, WV, WO, g = _mha_inputs(rng)
    mask = None
    if masked:
        mask = rng.random((heads, 4, 5)) < 0.6
        mask[0, 1] = False
    got = multi_head_attention_backward(Xq, Xkv, WQ, WK, WV, WO, heads, mask, g)
    want = ref.multi_head_attention_backward(Xq, Xkv, WQ, WK, WV, WO, heads, mask, g)
    for name, a, b in zip(MHA_NAMES, got, want):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, **TOL, err_msg=name)


def test_multi_head_finite_differences():
    rng = np.random.default_rng(1)
    Xq, Xkv, WQ, WK, WV, WO, g = _mha_inputs(rng)
    mask = np.tril(np.ones((4, 5), bool))
    args = [Xq, Xkv, WQ, WK, WV, WO]
    got = multi_head_attention_backward(*args, 2, mask, g)
    for pos, name in enumerate(MHA_NAMES[:6]):
        def loss(x, pos=pos):
            a = list(args)
            a[pos] = x
            return float(np.sum(g * multi_head_attention(*a, 2, mask)[0]))
        fd = fd_grad(loss, args[pos])
        err = np.max(np.abs(got[pos] - fd)) / max(1.0, np.max(np.abs(fd)))
        assert err <= 1e-8, name


def test_multi_head_float32_and_bad_d_out():
    rng = np.random.default_rng(2)
    args = [a.astype(np.float32) for a in _mha_inputs(rng)]
    got = multi_head_attention_backward(*args[:6], 2, None, args[6])
    want = ref.multi_head_attention_backward(*args[:6], 2, None, args[6])
    for a, b in zip(got, want):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"^d_out: expected shape \(4, 2\)"):
        multi_head_attention_backward(*args[:6], 2, None, np.ones((4, 3)))


def test_multi_head_agrees_with_torch_autograd():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    Xq, Xkv, WQ, WK, WV, WO, g = _mha_inputs(rng, L=5, S=5)
    mask = np.tril(np.ones((5, 5), bool))
    t = [torch.tensor(a, requires_grad=True) for a in (Xq, Xkv, WQ, WK, WV, WO)]
    h, dh = 3, 2

    def heads(P):  # (n, d_model) → (h, n, d_head)
        return P.reshape(P.shape[0], h, dh).transpose(0, 1)

    o = torch.nn.functional.scaled_dot_product_attention(
        heads(t[0] @ t[2]), heads(t[1] @ t[3]), heads(t[1] @ t[4]), attn_mask=torch.tensor(mask))
    (o.transpose(0, 1).reshape(5, 6) @ t[5]).backward(torch.tensor(g))
    got = multi_head_attention_backward(Xq, Xkv, WQ, WK, WV, WO, h, mask, g)
    for name, a, b in zip(MHA_NAMES, got, t):
        np.testing.assert_allclose(a, b.grad.numpy(), rtol=0, atol=1e-10, err_msg=name)


def _add_inputs(rng, L=3, S=4, d_q=2, d_k=3, d_v=2, h=5):
    return (rng.normal(size=(L, d_q)), rng.normal(size=(S, d_k)), rng.normal(size=(S, d_v)),
            rng.normal(size=(h, d_q)), rng.normal(size=(h, d_k)), rng.normal(size=h),
            rng.normal(size=(L, d_v)))


def test_additive_forward_matches_reference():
    rng = np.random.default_rng(4)
    Q, K, V, Wq, Wk, v, _ = _add_inputs(rng)
    mask = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]], bool)
    for m in (None, mask):
        out, w = additive_attention(Q, K, V, Wq, Wk, v, m)
        r_out, r_w = ref.additive_attention(Q, K, V, Wq, Wk, v, m)
        np.testing.assert_allclose(out, r_out, **TOL)
        np.testing.assert_allclose(w, r_w, **TOL)


@pytest.mark.parametrize("masked", [False, True])
def test_additive_backward_matches_reference_and_finite_differences(masked):
    rng = np.random.default_rng(5 + masked)
    Q, K, V, Wq, Wk, v, dO = _add_inputs(rng)
    mask = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]], bool) if masked else None
    got = additive_attention_backward(Q, K, V, Wq, Wk, v, mask, dO)
    want = ref.additive_attention_backward(Q, K, V, Wq, Wk, v, mask, dO)
    for name, a, b in zip(ADD_NAMES, got, want):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, **TOL, err_msg=name)
    args = [Q, K, V, Wq, Wk, v]
    for pos, name in enumerate(ADD_NAMES[:6]):
        def loss(x, pos=pos):
            a = list(args)
            a[pos] = x
            return float(np.sum(dO * additive_attention(*a, mask)[0]))
        fd = fd_grad(loss, args[pos])
        err = np.max(np.abs(got[pos] - fd)) / max(1.0, np.max(np.abs(fd)))
        assert err <= 1e-8, name
    if masked:  # the fully masked query (row 2) and the never-seen key 3 get nothing
        assert not got.dQ[1].any() and not got.dK[2].any() and not got.dV[2].any()


def test_additive_agrees_with_torch_autograd():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    Q, K, V, Wq, Wk, v, dO = _add_inputs(rng)
    t = [torch.tensor(a, requires_grad=True) for a in (Q, K, V, Wq, Wk, v)]
    e = torch.tanh((t[0] @ t[3].T)[:, None, :] + (t[1] @ t[4].T)[None, :, :]) @ t[5]  # (L, S)
    (torch.softmax(e, dim=1) @ t[2]).backward(torch.tensor(dO))
    got = additive_attention_backward(Q, K, V, Wq, Wk, v, None, dO)
    for name, a, b in zip(ADD_NAMES, got, t):
        np.testing.assert_allclose(a, b.grad.numpy(), rtol=0, atol=1e-10, err_msg=name)


def test_additive_float32_and_bad_inputs():
    rng = np.random.default_rng(7)
    args = [a.astype(np.float32) for a in _add_inputs(rng)]
    got = additive_attention_backward(*args[:6], None, args[6])
    want = ref.additive_attention_backward(*args[:6], None, args[6])
    for a, b in zip(got, want):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"^dO: expected shape \(3, 2\)"):
        additive_attention_backward(*args[:6], None, np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"^W_k: expected shape \(5, 3\)"):
        additive_attention_backward(*args[:4], np.ones((4, 3)), args[5], None, args[6])


def test_softmax_jacobian_and_backward_match_the_entrywise_reference():
    from engine.softmax_backward import softmax_backward, softmax_jacobian

    rng = np.random.default_rng(8)
    s = rng.normal(size=6) * 3
    alpha = ref.softmax_1d(s)
    np.testing.assert_allclose(softmax_jacobian(s), ref.softmax_jacobian(alpha), rtol=0, atol=1e-15)
    A = np.stack([ref.softmax_1d(rng.normal(size=6)) for _ in range(4)] + [np.zeros(6)])
    G = rng.normal(size=(5, 6))
    want = np.stack([ref.softmax_jacobian(a).T @ g for a, g in zip(A, G)])
    np.testing.assert_allclose(softmax_backward(A, G), want, rtol=0, atol=1e-15)
    assert not softmax_backward(A, G)[4].any()             # a fully masked row passes nothing
    masked = softmax_jacobian([0.0, -np.inf, 1.0])          # a masked score: zero row and column
    assert not masked[1].any() and not masked[:, 1].any()
    with pytest.raises(ValueError, match=r"^grad: expected shape \(5, 6\)"):
        softmax_backward(A, G[:, :5])


def test_multi_head_cost_counts_every_product():
    from engine.costs import layer_costs, multi_head_cost

    c = multi_head_cost(10, 7, 12, 3)                        # cross-attention, d_k = d_v = 4
    assert c.params == {"W_Q": 144, "W_K": 144, "W_V": 144, "W_O": 144}
    assert c.flops == {"Q = X W_Q": 2 * 10 * 12 * 12, "K = X W_K": 2 * 7 * 12 * 12,
                       "V = X W_V": 2 * 7 * 12 * 12, "Q Kᵀ": 3 * 2 * 10 * 4 * 7,
                       "α V": 3 * 2 * 10 * 7 * 4, "concat W_O": 2 * 10 * 12 * 12}
    assert c.exponentials == 3 * 10 * 7 and len(c.products) == 3 + 3 + 3 + 1
    rows = layer_costs(9, 5, kernel=3)
    assert [r.path_length for r in rows] == [1, 9, 2, 3]    # log₃ 9 = 2 exactly, 9 / 3 = 3
    with pytest.raises(ValueError, match="^heads: d_model = 12 is not divisible by heads = 5"):
        multi_head_cost(4, 4, 12, 5)
