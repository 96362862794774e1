"""Boolean attention masks: padding and causal (lecture §7 "padding masking", §6 GPT-style).

Convention (PyTorch ``scaled_dot_product_attention``): a mask is boolean and **True means
"may attend"**. Masks broadcast against scores of shape (..., L, S):

- a padding mask (B, S) marks the real tokens of each sequence in a padded batch; give it to
  attention as ``mask[:, None, :]`` (B, 1, S) so every query row sees the same keys;
- a causal mask (L, S) lets query i see keys j <= i. For L != S it is top-left aligned, as
  PyTorch's ``torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)`` (``is_causal=True``).

These are one-line NumPy constructions, so no numba kernel is involved.
"""

from __future__ import annotations

import numpy as np

from engine._validate import as_int, check_positive_int


def padding_mask(lengths: object, max_len: int | None = None) -> np.ndarray:
    """Mask of real (non-padding) tokens for a batch of sequences padded to one length.

    Args:
        lengths: (B,) integers >= 0, the true length of each sequence (0 gives a row with no
            real token, which attention turns into zero weights and a zero output).
        max_len: S, the padded length; defaults to ``max(lengths)``. Must be >= every length.

    Returns:
        (B, S) bool, ``mask[b, j]`` True when ``j < lengths[b]`` (True = real token).

    Raises:
        ValueError: if ``lengths`` is not a non-empty 1-D array of integers >= 0, or
            ``max_len`` is smaller than the longest sequence, or S would be 0.
    """
    lens = as_int(lengths, "lengths", ndim=1, low=0)
    if lens.size == 0:
        raise ValueError("lengths: is empty (shape (0,)); expected shape (B,) with B >= 1")
    longest = int(lens.max())
    if max_len is None:
        if longest == 0:
            raise ValueError("lengths: every length is 0; pass max_len to choose the padded length S")
        S = longest
    else:
        S = check_positive_int(max_len, "max_len")
        if S < longest:
            raise ValueError(f"max_len: {S} is shorter than the longest sequence ({longest}); "
                             f"expected max_len >= max(lengths)")
    return np.arange(S)[None, :] < lens[:, None]  # (B, S)


def causal_mask(L: int, S: int | None = None) -> np.ndarray:
    """Causal (look-back only) mask: query i may attend to keys j <= i.

    Args:
        L: number of queries (rows).
        S: number of keys (columns); defaults to L.

    Returns:
        (L, S) bool, lower-triangular including the diagonal, top-left aligned when L != S
        (row i allows columns 0..i, as ``torch.ones(L, S).tril()``).

    Raises:
        ValueError: if L or S is not an integer >= 1.
    """
    L = check_positive_int(L, "L")
    S = L if S is None else check_positive_int(S, "S")
    return np.tri(L, S, k=0, dtype=np.bool_)  # (L, S)
