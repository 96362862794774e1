"""``positional-encoding`` (§6, §13): PE(pos, 2i) = sin(pos / base^(2i/d)), cos in 2i+1."""

from __future__ import annotations

import math

import numpy as np

from engine.mistakes.slips import Slips
from engine.positional import sinusoidal_encoding

TRACE = "positional-encoding"
MISTAKES = ("pe-sin-cos-swapped", "pe-i-not-2i", "calculator-degrees", "rounded-intermediates")
PAIRS = (("pe-sin-cos-swapped", "calculator-degrees"), ("pe-i-not-2i", "calculator-degrees"),
         ("pe-sin-cos-swapped", "pe-i-not-2i"))


def compute(inp: dict, s: Slips) -> dict:
    n_positions, d, base = inp["n_positions"], inp["d_model"], inp["base"]
    pairs = (d + 1) // 2
    i = np.arange(pairs)
    freq = 1.0 / base ** ((i if s.on("pe-i-not-2i") else 2 * i) / d)  # (pairs,)
    freq = s.r(freq)
    angles = s.r(np.arange(n_positions)[:, None] * freq[None, :])  # (n, pairs)
    turn = math.pi / 180 if s.on("calculator-degrees") else 1.0
    sin, cos = np.sin(angles * turn), np.cos(angles * turn)
    if s.on("pe-sin-cos-swapped"):
        sin, cos = cos, sin
    if s.ids:
        PE = np.zeros((n_positions, d))
        PE[:, 0::2] = sin[:, : (d + 1) // 2]
        PE[:, 1::2] = cos[:, : d // 2]
    else:
        PE = sinusoidal_encoding(n_positions, d, base)
    return {"omega": freq, "angles": angles, "PE": PE, "gram": PE @ PE.T}
