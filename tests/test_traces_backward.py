"""The derivation traces of issue 18: softmax Jacobian, attention backward, the extended
training step, multi-head cost and additive backward. Expected values come from hand
calculation or the naive twins in tests/reference.py, never from the traces themselves."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.traces import build

# the §5 "I love cats" projections, as used: Q = X W_Q etc. with X = the first three unit rows
X = np.eye(4)[:3]
W_Q = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]], float)
W_K = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0]], float)
W_V = np.array([[1, 0], [0, 1], [0, 0], [0, 0]], float)


def test_softmax_jacobian_by_hand():
    t = build("softmax-jacobian")
    s = 1 / math.sqrt(3)                                    # §5: q·K₁ = 1, the others 0
    a1 = math.exp(s) / (math.exp(s) + 2)
    a2 = 1 / (math.exp(s) + 2)
    assert np.allclose(t.result["alpha"], [a1, a2, a2], rtol=0, atol=1e-15)
    J = t.result["J"]
    assert math.isclose(J[0, 0], a1 * (1 - a1), rel_tol=1e-14)
    assert math.isclose(J[1, 2], -a2 * a2, rel_tol=1e-14)
    assert np.allclose(J, J.T) and np.allclose(J.sum(axis=1), 0, atol=1e-15)
    # g = e₁: ∂L/∂s is J's first column, α₁(1 − α₁) and −α₁α_j
    assert np.allclose(t.result["d_scores"], [a1 * (1 - a1), -a1 * a2, -a1 * a2], atol=1e-15)
    assert t.disagreements() == []


@pytest.mark.parametrize(("d_k", "seed"), [(64, 0), (256, 3)])
def test_softmax_jacobian_saturation_uses_the_frobenius_norm(d_k, seed):
    t = build("softmax-jacobian", {"d_k_big": d_k, "seed": seed})
    sat = t.steps[-1].values
    for name in ("unscaled", "scaled"):
        J = ref.softmax_jacobian(sat[f"alpha_{name}"])
        assert math.isclose(sat[f"norm_{name}"], math.sqrt((J ** 2).sum()), rel_tol=1e-12)
    saturated = sat["norm_unscaled"] < 0.5 * sat["norm_scaled"]
    assert ("collapses" not in t.steps[-1].note) == saturated
    if (d_k, seed) == (64, 0):                              # the default draw does saturate
        assert saturated and max(sat["alpha_unscaled"]) > 0.99


def test_attention_backward_matches_the_reference_and_finite_differences():
    t = build("attention-backward")
    dO = np.array([[1, 0], [1, 0], [1, 0]], float)
    dQ, dK, dV, dA = ref.attention_backward_2d(X @ W_Q, X @ W_K, X @ W_V, None, dO)
    for key, want in (("dQ", dQ), ("dK", dK), ("dV", dV), ("d_alpha", dA),
                      ("dW_Q", X.T @ dQ), ("dW_K", X.T @ dK), ("dW_V", X.T @ dV)):
        np.testing.assert_allclose(t.result[key], want, rtol=0, atol=1e-14, err_msg=key)
    # L = Σᵢ Oᵢ₁: dV's first column is each word's total weight, its second column is 0
    np.testing.assert_allclose(t.result["dV"][:, 0], t.result["alpha"].sum(axis=0), atol=1e-15)
    assert not t.result["dV"][:, 1].any()
    chk = t.steps[-1].values
    assert math.isclose(chk["analytic"], chk["finite_difference"], rel_tol=1e-7)
    assert np.allclose(t.steps[3].values["dQ_2"], dQ[1])    # the worked row is row 2 of dQ


def test_attention_backward_takes_your_own_gradient_and_row():
    dO = [[0.5, -1], [0, 2], [1, 1]]
    t = build("attention-backward", {"dO": dO, "position": 3})
    want = ref.attention_backward_2d(X @ W_Q, X @ W_K, X @ W_V, None, np.array(dO, float))
    np.testing.assert_allclose(t.result["dQ"], want[0], atol=1e-14)
    assert t.source == "user" and t.disagreements() == []
    with pytest.raises(ValueError, match=r"^input position: got 4, expected a whole number from 1 to 3"):
        build("attention-backward", {"position": 4})


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_step_reaches_the_attention_weights(optimizer):
    t = build("training-step", {"optimizer": optimizer})
    f = t.steps[0].values
    H, S = f["H"], f["S"]
    dC = t.steps[2].values["dC"]
    dQ, dK, dV, _ = ref.attention_backward_2d(S @ f["W_Q"], H @ f["W_K"], H @ f["W_V"], None, dC)
    np.testing.assert_allclose(t.result["dW_Q"], S.T @ dQ, atol=1e-13)
    np.testing.assert_allclose(t.result["dW_K"], H.T @ dK, atol=1e-13)
    np.testing.assert_allclose(t.result["dW_V"], H.T @ dV, atol=1e-13)
    chk = t.steps[4].values
    assert math.isclose(chk["analytic_W_Q"], chk["finite_difference_W_Q"], rel_tol=1e-6)
    new = t.steps[-1].values
    lr = t.inputs["lr"]
    weights = {**f, "W_O": t.steps[1].values["W_O"]}
    for name in ("W_O", "W_Q", "W_K", "W_V"):
        g = t.result[f"d{name}"]
        step = new[f"{name}_new"] - weights[name]
        if optimizer == "sgd":
            np.testing.assert_allclose(step, -lr * g, atol=1e-14)
        else:                                               # Adam's first step: η·sign(g)
            np.testing.assert_allclose(step, -lr * np.sign(g), atol=1e-6)
    assert not np.allclose(t.result["alpha_after"], t.result["alpha"])
    assert t.result["L_after"] < t.result["L"] and t.disagreements() == []


def test_training_step_says_the_lesson_defines_z_with_the_decoder_state():
    note = build("training-step").steps[1].note
    assert "W_O Hₜ⁽ᵈ⁾" in note and "Hₜ⁽ᵈ⁾ = Cₜ" in note
    with pytest.raises(ValueError, match=r"^input optimizer: got 'rmsprop', expected one of sgd, adam"):
        build("training-step", {"optimizer": "rmsprop"})


def test_multi_head_cost_by_hand():
    t = build("multi-head-cost")
    n, d, h, dk = 100, 512, 8, 64
    assert t.result["params"] == 4 * d * d == 1_048_576
    flops = 3 * 2 * n * d * d + 2 * (2 * h * n * n * dk) + 2 * n * d * d
    assert t.result["flops"] == flops and t.result["exponentials"] == h * n * n
    assert t.result["path_length"] == [1, 100, 5, 34]      # ⌈log₃ 100⌉ = 5, ⌈100 / 3⌉ = 34
    assert t.result["operations"] == [n * n * d, n * d * d, 3 * n * d * d, 3 * n * d]
    assert t.steps[3].values["crossover_n"] == 2 * d
    other = build("multi-head-cost", {"n": 2048, "d_model": 64, "heads": 3, "d_k": 10})
    assert other.result["params"] == 4 * 64 * 3 * 10 and other.disagreements() == []
    assert "attending costs more" in other.steps[3].note
    with pytest.raises(ValueError, match=r"^input heads: got 5, expected a divisor of d_model = 512"):
        build("multi-head-cost", {"heads": 5})


def test_additive_backward_matches_the_reference():
    t = build("additive-backward")
    q = np.array([[0, 1, 0]], float)
    K = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], float)
    V = np.array([[1, 0], [0, 1], [0, 0]], float)
    I3 = np.eye(3)
    dQ, dK, _, dWq, dWk, dv, _ = ref.additive_attention_backward(q, K, V, I3, I3, np.ones(3), None,
                                                                 np.array([[1.0, 0.0]]))
    for key, want in (("dq", dQ[0]), ("dK", dK), ("dW_q", dWq), ("dW_k", dWk), ("dv", dv)):
        np.testing.assert_allclose(t.result[key], want, rtol=0, atol=1e-14, err_msg=key)
    dq_dot, dK_dot, _, _ = ref.attention_backward_2d(q, K, V, None, np.array([[1.0, 0.0]]))
    np.testing.assert_allclose(t.result["dq_dot"], dq_dot[0], atol=1e-14)
    np.testing.assert_allclose(t.result["dK_dot"], dK_dot, atol=1e-14)
    # the scores' gradient sums to zero whatever the scorer (the shared softmax Jacobian)
    assert abs(t.result["d_scores"].sum()) < 1e-15


def test_additive_backward_with_other_widths_skips_the_dot_product():
    t = build("additive-backward", {"query": [1, -1], "W_q": [[1, 0], [0, 1], [1, 1]]})
    assert "dq_dot" not in t.result and t.disagreements() == []
    assert t.steps[-1].title == "No dot-product comparison"
