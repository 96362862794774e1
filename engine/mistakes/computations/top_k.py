"""``top-k`` (§10): keep the k most probable words (ties kept), renormalise, draw."""

from __future__ import annotations

import numpy as np

from engine.decoding import filtered_probs
from engine.mistakes.slips import Slips
from engine.traces._common import n
from engine.traces.top_k import check_distribution, draw

TRACE = "top-k"
MISTAKES = ("top-k-not-renormalised", "top-k-ties-dropped")
PAIRS = (("top-k-not-renormalised", "top-k-ties-dropped"),)


def compute(inp: dict, s: Slips) -> dict:
    probs, k, seed = inp["probs"], inp["k"], inp["seed"]
    check_distribution(probs)
    V = probs.size
    order = sorted(range(V), key=lambda i: (-probs[i], i))
    kk = min(k, V)
    keep = probs >= probs[order[kk - 1]]  # ties with the k-th kept
    if s.on("top-k-ties-dropped"):
        keep = np.isin(np.arange(V), order[:kk])
    mass = float(probs[keep].sum())
    s.fact(mass=n(mass))
    if s.on("top-k-not-renormalised"):
        kept = np.where(keep, probs, 0.0)
    elif s.ids:
        kept = np.where(keep, probs / mass, 0.0)
    else:
        kept = filtered_probs(np.log(np.where(probs > 0, probs, 1e-300)), top_k=k)
    return {"probs_top_k": kept, "u": draw(kept, seed)[0]}
