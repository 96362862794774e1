"""``nucleus`` (§10): the smallest top set whose mass reaches p, renormalised."""

from __future__ import annotations

import numpy as np

from engine.decoding import TOP_P_EPS, filtered_probs
from engine.mistakes.slips import Slips
from engine.traces._common import n
from engine.traces.top_k import check_distribution, draw

TRACE = "nucleus"
MISTAKES = ("top-p-excludes-boundary", "top-p-not-renormalised")
PAIRS = (("top-p-excludes-boundary", "top-p-not-renormalised"),)


def compute(inp: dict, s: Slips) -> dict:
    probs, p, seed = inp["probs"], inp["p"], inp["seed"]
    check_distribution(probs)
    order = sorted(range(probs.size), key=lambda i: (-probs[i], i))
    keep = np.zeros(probs.size, bool)
    before = 0.0
    short = s.on("top-p-excludes-boundary")
    for i in order:
        reached = before + probs[i] if short else before  # the slip stops before the crossing word
        keep[i] = reached < p - TOP_P_EPS or not keep.any()
        before += probs[i]
    mass = float(np.sum(probs[keep]))
    s.fact(mass=n(mass), p=n(p))
    if s.on("top-p-not-renormalised"):
        kept = np.where(keep, probs, 0.0)
    elif s.ids:
        kept = np.where(keep, probs / mass, 0.0)
    else:
        kept = filtered_probs(np.log(np.where(probs > 0, probs, 1e-300)), top_p=p)
    return {"nucleus_size": int(keep.sum()), "nucleus_mass": mass, "probs_top_p": kept,
            "u": draw(kept, seed)[0]}
