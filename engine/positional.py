"""Sinusoidal positional encoding (Vaswani et al., 2017, §3.5; lecture §6 "positional encodings").

Self-attention treats its input as a set, so order must be added to the embeddings:

    PE[pos, 2i]   = sin(pos / base^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / base^(2i / d_model))

with base = 10000 in the paper. For odd d_model the last column is a sine (its cosine partner
would be column d_model, which does not exist).
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine._validate import check_positive_int, check_scalar


@jit
def _sinusoidal(n, d, base, out):
    """out (n, d): sin in even columns, cos in odd ones, sharing the frequency of column 2i."""
    for c in range(d):
        two_i = c - (c % 2)
        inv_freq = 1.0 / base ** (two_i / d)
        for pos in range(n):
            angle = pos * inv_freq
            out[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The Transformer's fixed sinusoidal position table.

    Args:
        n_positions: n, number of positions (rows 0..n-1).
        d_model: d, embedding width (odd widths allowed).
        base: wavelength base, > 1 (10000 in Vaswani et al.).

    Returns:
        (n, d) float64 table; add row ``pos`` to the embedding of the token at ``pos``.

    Raises:
        ValueError: if n_positions or d_model is not an integer >= 1, or base <= 1.
    """
    n = check_positive_int(n_positions, "n_positions")
    d = check_positive_int(d_model, "d_model")
    b = check_scalar(base, "base", low=1.0, low_open=True)
    out = np.empty((n, d), dtype=np.float64)  # (n, d)
    _sinusoidal(n, d, b, out)
    return out
