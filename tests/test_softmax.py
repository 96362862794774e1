"""engine.softmax against the reference twins, hand values and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as ref
from engine.softmax import log_softmax, masked_softmax, softmax

TOL = dict(rtol=1e-13, atol=1e-15)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("shape,axis", [((1,), -1), ((5,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1)])
@pytest.mark.parametrize("temperature", [1.0, 0.5, 3.0])
def test_softmax_and_log_softmax_match_reference(rng, shape, axis, temperature):
    x = rng.normal(scale=3.0, size=shape)
    np.testing.assert_allclose(softmax(x, axis=axis, temperature=temperature),
                               ref.softmax(x, axis=axis, temperature=temperature), **TOL)
    np.testing.assert_allclose(log_softmax(x, axis=axis, temperature=temperature),
                               ref.log_softmax(x, axis=axis, temperature=temperature), rtol=1e-12, atol=1e-12)


def test_softmax_by_hand():
    e = math.e
    np.testing.assert_allclose(softmax([1.0, 0.0]), [e / (e + 1), 1 / (e + 1)], rtol=1e-15)
    np.testing.assert_allclose(softmax([2.0, 0.0], temperature=2.0), [e / (e + 1), 1 / (e + 1)], rtol=1e-15)
    np.testing.assert_allclose(log_softmax([0.0, 0.0]), [-math.log(2)] * 2, rtol=1e-15)


def test_ties_are_uniform():
    np.testing.assert_array_equal(softmax([3.0, 3.0, 3.0, 3.0]), [0.25] * 4)


def test_extreme_scores():
    np.testing.assert_array_equal(softmax([1e4, -1e4, 0.0]), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(softmax([-1e4, -1e4]), [0.5, 0.5])
    got = log_softmax([1e4, -1e4])
    assert got[0] == 0.0 and got[1] == -2e4
    # a tiny temperature is an argmax, not an overflow
    np.testing.assert_array_equal(softmax([1.0, 2.0, 0.5], temperature=1e-300), [0.0, 1.0, 0.0])


def test_minus_inf_entries_and_all_minus_inf_row():
    np.testing.assert_allclose(softmax([0.0, -np.inf, 0.0]), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(softmax([[-np.inf, -np.inf], [0.0, 0.0]]), [[0.0, 0.0], [0.5, 0.5]])


def test_masked_softmax_matches_reference(rng):
    s = rng.normal(size=(4, 5))
    mask = rng.random((4, 5)) < 0.5
    mask[2] = False
    got = masked_softmax(s, mask)
    np.testing.assert_allclose(got, ref.masked_softmax(s, mask), **TOL)
    np.testing.assert_array_equal(got[~mask], 0.0)
    np.testing.assert_array_equal(got[2], 0.0)
    # broadcast mask along another axis
    m_col = rng.random((4, 1)) < 0.5
    np.testing.assert_allclose(masked_softmax(s, m_col, axis=0), ref.masked_softmax(s, m_col, axis=0), **TOL)
    np.testing.assert_allclose(masked_softmax(s, None), ref.softmax(s), **TOL)


def test_float32_in_float32_out(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    for fn in (softmax, log_softmax):
        got = fn(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, getattr(ref, fn.__name__)(x), rtol=1e-5, atol=1e-6)
    assert masked_softmax(x, np.ones((3, 4), bool)).dtype == np.float32


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: softmax([]), "x: is empty"),
        (lambda: softmax([1.0, np.nan]), "x: contains NaN"),
        (lambda: softmax([1.0, np.inf]), "x: contains \\+inf"),
        (lambda: softmax([1.0, 2.0], temperature=0.0), "temperature"),
        (lambda: softmax([1.0, 2.0], axis=1), "axis"),
        (lambda: masked_softmax([1.0, 2.0], [True, False, True]), "mask"),
        (lambda: masked_softmax([1.0, 2.0], [0.5, 1.0]), "mask"),
        (lambda: log_softmax([[1.0], [np.nan]]), "x: contains NaN"),
    ],
)
def test_errors_name_the_argument(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)
