"""``padded-pool`` (extra, §9): mean pooling of a padded row of readings.

Not a trace: the ``pooling`` trace has no padding. The first ``length`` readings are real;
the rest is padding (written as 0) and takes no part in the mean.
"""

from __future__ import annotations

import numpy as np

from engine.mistakes.slips import Slips
from engine.pooling import mean_pool
from engine.trace import InputSpec
from engine.traces import _draw

TRACE = "pooling"
INPUTS = [
    InputSpec("values", "vector", [2, 8, 3, 0, 0], "the readings, padding (0) at the end",
              shape=("n",)),
    InputSpec("length", "int", 3, "how many readings are real", low=1),
]
MISTAKES = ("pool-counts-padding",)
PAIRS = ()


def draw_inputs(rng: np.random.Generator) -> dict:
    """Four to six readings, one to three of them padding."""
    n = int(rng.integers(4, 7))
    length = int(rng.integers(max(1, n - 3), n))
    values = np.zeros(n)
    values[:length] = _draw.grid(rng, 1, 12, 1, length)
    return {"values": values, "length": length}


def compute(inp: dict, s: Slips) -> dict:
    values, length = inp["values"], inp["length"]
    n = values.size
    if length > n:
        raise ValueError(f"input length: got {length}, expected a whole number from 1 to {n}")
    s.fact(n=n, count=length)
    used = values if s.on("pool-counts-padding") else values[:length]
    return {"mean": float(mean_pool(used))}
