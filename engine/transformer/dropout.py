"""Dropout for the Transformer's training pass: inverted masks, named as PyTorch's modules.

Inverted dropout (Srivastava et al. 2014, as ``nn.Dropout``): in training each element is
kept with probability 1 − p and scaled by 1/(1 − p), so its expected value is unchanged and
evaluation simply uses no mask. A mask here is that product already, ``m = [u ≥ p] / (1 − p)``
with u ~ U[0, 1) from the caller's generator, in the model's dtype; the forward multiplies by
it and the backward multiplies the incoming gradient by the same ``m``.

Masks are drawn in forward order and kept by name, the names of the PyTorch modules that
drop (``encoder.layers.0.dropout1``, ``decoder.layers.1.multihead_attn``, ...; the list is in
:mod:`engine.transformer.model`), so a test can hand the same masks to a naive twin, or
replay them to hold the loss fixed while it takes finite differences.
"""

from __future__ import annotations

import numpy as np

from engine._validate import check_scalar


class Dropout:
    """The dropout masks of one training pass.

    Args:
        p: drop probability, 0 ≤ p < 1.
        rng: the generator masks are drawn from (None with ``replay``).
        dtype: the model's dtype (masks are in it).
        replay: masks by name to hand out instead of drawing new ones.
    """

    def __init__(self, p: float, rng: np.random.Generator | None, dtype: np.dtype,
                 replay: dict[str, np.ndarray] | None = None) -> None:
        self.p = check_scalar(p, "dropout", low=0.0, high=1.0, high_open=True)
        self.rng = rng
        self.dtype = np.dtype(dtype)
        self.replay = replay
        self.masks: dict[str, np.ndarray] = {}
        """Every mask handed out so far, by module name, in forward order."""

    @classmethod
    def given(cls, masks: dict[str, np.ndarray], dtype: np.dtype) -> Dropout:
        """Hand out exactly ``masks`` (e.g. another pass's :attr:`masks`) by name."""
        return cls(0.0, None, dtype, replay=masks)

    def mask(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The mask of module ``name``: [u ≥ p] / (1 − p), shape ``shape``, the model's dtype."""
        if self.replay is not None:
            m = self.replay[name]
            if m.shape != shape:
                raise ValueError(f"{name}: mask of shape {m.shape}, the pass needs {shape}")
            m = np.ascontiguousarray(m, dtype=self.dtype)
        else:
            assert self.rng is not None                                    # not a replay
            keep = self.rng.random(shape) >= self.p                       # shape, bool
            m = keep.astype(self.dtype) * self.dtype.type(1.0 / (1.0 - self.p))
        self.masks[name] = m
        return m
