"""engine.loss against the reference twin, hand values and PyTorch's documented semantics."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.loss import cross_entropy, cross_entropy_grad

TOL = dict(rtol=1e-12, atol=1e-14)


@pytest.fixture
def rng():
    return np.random.default_rng(5)


@pytest.mark.parametrize("shape", [(6,), (4, 6), (2, 3, 6)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0])
def test_matches_reference(rng, shape, reduction, eps):
    z = rng.normal(scale=2.0, size=shape)
    t = rng.integers(0, shape[-1], size=shape[:-1])
    if t.ndim:
        t.flat[0] = -100  # one padded target
    got = cross_entropy(z, t, reduction=reduction, label_smoothing=eps)
    want = ref.cross_entropy(z, t, reduction=reduction, label_smoothing=eps)
    np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(cross_entropy_grad(z, t, reduction=reduction, label_smoothing=eps),
                               ref.cross_entropy_grad(z, t, reduction=reduction, label_smoothing=eps), **TOL)


def test_notes_two_step_sequence_loss():
    # "cat" → "chat": P(chat) = 0.6 at step 1, P(<EOS>) = 0.8 at step 2, summed over steps
    probs = np.array([[0.6, 0.3, 0.1], [0.1, 0.1, 0.8]])
    got = cross_entropy(np.log(probs), [0, 2], reduction="sum")
    assert got == pytest.approx(-math.log(0.6) - math.log(0.8), rel=1e-14)
    per_step = cross_entropy(np.log(probs), [0, 2], reduction="none")
    np.testing.assert_allclose(per_step, [-math.log(0.6), -math.log(0.8)], rtol=1e-14)
    assert cross_entropy(np.log(probs), [0, 2]) == pytest.approx((-math.log(0.6) - math.log(0.8)) / 2)


def test_single_vector_and_scalar_target():
    z = np.array([2.0, 0.0, -1.0])
    lse = math.log(math.exp(2.0) + 1.0 + math.exp(-1.0))
    assert cross_entropy(z, 1) == pytest.approx(lse - 0.0, rel=1e-14)
    assert np.shape(cross_entropy(z, 1, reduction="none")) == ()


def test_label_smoothing_by_hand():
    p = np.array([0.6, 0.3, 0.1])
    eps = 0.1
    want = (1 - eps) * -math.log(0.6) + eps * -(math.log(0.6) + math.log(0.3) + math.log(0.1)) / 3
    assert cross_entropy(np.log(p), 0, label_smoothing=eps) == pytest.approx(want, rel=1e-13)
    # uniform prediction: every −log p_c = log V, whatever ε
    assert cross_entropy(np.zeros(4), 2, label_smoothing=0.3) == pytest.approx(math.log(4), rel=1e-14)


def test_ignore_index_mean_counts_only_real_targets():
    z = np.array([[1.0, 0.0], [0.0, 3.0], [5.0, 5.0]])
    t = np.array([0, -100, 1])
    l0 = math.log(1 + math.exp(-1.0))
    l2 = math.log(2.0)
    assert cross_entropy(z, t) == pytest.approx((l0 + l2) / 2, rel=1e-14)
    assert cross_entropy(z, t, reduction="sum") == pytest.approx(l0 + l2, rel=1e-14)
    np.testing.assert_allclose(cross_entropy(z, t, reduction="none"), [l0, 0.0, l2], rtol=1e-14)
    g = cross_entropy_grad(z, t)
    np.testing.assert_array_equal(g[1], 0.0)
    # custom padding id 0
    assert cross_entropy(z, [0, 1, 1], ignore_index=0) == pytest.approx(
        (math.log(1 + math.exp(-3.0)) + l2) / 2, rel=1e-14)


def test_all_ignored_mean_is_nan_with_zero_grad():
    z = np.zeros((2, 3))
    t = [-100, -100]
    assert math.isnan(cross_entropy(z, t))
    assert cross_entropy(z, t, reduction="sum") == 0.0
    np.testing.assert_array_equal(cross_entropy_grad(z, t), 0.0)


def test_grad_is_p_minus_onehot():
    z = np.array([1.0, 2.0, 0.5])
    e = np.exp(z)
    p = e / e.sum()
    np.testing.assert_allclose(cross_entropy_grad(z, 1), p - [0, 1, 0], rtol=1e-14)
    np.testing.assert_allclose(cross_entropy_grad(z, 1, label_smoothing=0.3),
                               p - 0.7 * np.array([0, 1, 0]) - 0.1, rtol=1e-14)
    Z = np.stack([z, z, z])
    g = cross_entropy_grad(Z, [1, 1, 1])
    np.testing.assert_allclose(g, np.tile((p - [0, 1, 0]) / 3, (3, 1)), rtol=1e-14)  # mean: / N


def test_extreme_logits_stay_finite():
    z = np.array([[1e4, -1e4, 0.0]])
    assert cross_entropy(z, [0]) == 0.0
    assert cross_entropy(z, [1]) == pytest.approx(2e4)
    g = cross_entropy_grad(z, [1])
    np.testing.assert_allclose(g, [[1.0, -1.0, 0.0]], atol=1e-300)


def test_float32_in_float32_out(rng):
    z = rng.normal(size=(3, 4)).astype(np.float32)
    t = [0, 1, 3]
    got = cross_entropy(z, t)
    assert isinstance(got, np.float32)
    assert got == pytest.approx(ref.cross_entropy(z, t), rel=1e-6)
    assert cross_entropy(z, t, reduction="none").dtype == np.float32
    assert cross_entropy_grad(z, t).dtype == np.float32


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: cross_entropy(np.zeros((2, 3)), [0, 1, 2]), "targets: expected shape \\(2,\\)"),
        (lambda: cross_entropy(np.zeros((2, 3)), [0, 3]), "targets: class indices must be in \\[0, 3\\)"),
        (lambda: cross_entropy(np.zeros((2, 3)), [0, -1]), "targets"),
        (lambda: cross_entropy(np.zeros((2, 3)), [0.5, 1]), "targets: expected whole numbers"),
        (lambda: cross_entropy(np.zeros(3), [0, 1]), "targets: expected shape \\(\\) \\(a single integer\\)"),
        (lambda: cross_entropy(np.zeros((1, 2, 3, 4)), np.zeros((1, 2, 3), int)), "logits"),
        (lambda: cross_entropy([[0.0, np.nan]], [0]), "logits: contains NaN"),
        (lambda: cross_entropy(np.zeros((0, 3)), np.zeros(0, int)), "logits: is empty"),
        (lambda: cross_entropy(np.zeros((2, 3)), [0, 1], reduction="avg"), "reduction"),
        (lambda: cross_entropy(np.zeros((2, 3)), [0, 1], label_smoothing=1.5), "label_smoothing"),
        (lambda: cross_entropy_grad(np.zeros((2, 3)), [0, 1], ignore_index=0.5), "ignore_index"),
    ],
)
def test_errors_name_the_argument(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)
