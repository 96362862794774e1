"""``scoring-compare`` (§8): one query and one key, scaled dot product vs additive scoring."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.scoring import dot_scores

TRACE = "scoring-compare"
MISTAKES = ("no-scale", "scale-by-dk", "rounded-intermediates", "tanh-left-out", "transposed-weight")
PAIRS = (("tanh-left-out", "transposed-weight"), ("rounded-intermediates", "transposed-weight"))


def compute(inp: dict, s: Slips) -> dict:
    Q, K, W_Q, W_K, v = inp["Q"], inp["K"], inp["W_Q"], inp["W_K"], inp["v"]
    out: dict[str, Any] = {}
    if Q.size == K.size:
        dot = float(dot_scores(Q, K[None, :])[0])
        scaled = s.r(dot / _ops.scale(K.size, s))
        out.update(dot=dot, scaled=scaled)
    else:
        s.fact(d_k=K.size, sqrt_dk=_ops.show(math.sqrt(K.size)))
    a = _ops.transpose_if_square(W_Q, s) @ Q  # (h,)
    b = _ops.transpose_if_square(W_K, s) @ K  # (h,)
    total = a + b
    th = total if s.on("tanh-left-out") else s.r(np.tanh(total))
    additive = s.r(float(v @ th))
    out.update({"W_Q Q": a, "W_K K": b, "sum": total, "tanh": th, "additive": additive})
    if "scaled" in out:
        out["difference"] = out["scaled"] - additive
    return out
