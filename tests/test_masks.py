"""engine.masks against hand-written masks and the reference twins."""

from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from engine.masks import causal_mask, padding_mask


def test_padding_mask_by_hand():
    got = padding_mask([3, 1, 0], max_len=4)
    want = np.array([[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=bool)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


def test_padding_mask_default_max_len_is_longest():
    got = padding_mask(np.array([2, 5, 1]))
    assert got.shape == (3, 5)
    np.testing.assert_array_equal(got, ref.padding_mask([2, 5, 1]))


@pytest.mark.parametrize("L,S", [(1, 1), (3, 3), (2, 5), (5, 2), (4, 1), (1, 4)])
def test_causal_mask_matches_tril(L, S):
    got = causal_mask(L, S)
    assert got.shape == (L, S) and got.dtype == np.bool_
    # torch.ones(L, S).tril() is top-left aligned: row i allows columns 0..i
    np.testing.assert_array_equal(got, ref.causal_mask(L, S))
    np.testing.assert_array_equal(got, np.tril(np.ones((L, S), dtype=bool)))


def test_causal_mask_square_default():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: padding_mask([]), "lengths"),
        (lambda: padding_mask([[1, 2]]), "lengths"),
        (lambda: padding_mask([1, -1]), "lengths"),
        (lambda: padding_mask([1.5]), "lengths"),
        (lambda: padding_mask([0, 0]), "max_len"),
        (lambda: padding_mask([3, 1], max_len=2), "max_len"),
        (lambda: causal_mask(0), "L"),
        (lambda: causal_mask(2, 0), "S"),
        (lambda: causal_mask(2.0), "L"),
    ],
)
def test_mask_errors_name_the_argument(call, needle):
    with pytest.raises(ValueError, match=needle) as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("mask", [
    np.zeros((2, 3)),                      # PyTorch would read this as additive: nothing masked
    np.ones((2, 3), dtype=np.float32),
    np.array([[1, 0, 1], [0, 1, 1]]),      # integers 0/1 are not a mask either
])
def test_a_non_boolean_mask_raises_instead_of_being_guessed(mask):
    from engine.attention import attention
    from engine.softmax import masked_softmax

    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^mask: expected a boolean mask \(True = may attend\), got "
                                         + str(mask.dtype)):
        masked_softmax(x, mask)
    with pytest.raises(ValueError, match="expected a boolean mask"):
        attention(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 1)), mask=mask)


def test_a_python_list_of_bools_is_a_mask():
    from engine.softmax import masked_softmax

    got = masked_softmax([[0.0, 0.0, 0.0]], [[True, False, True]])
    np.testing.assert_allclose(got, [[0.5, 0.0, 0.5]])
