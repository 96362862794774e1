"""``scaling`` (§8): Var(q·k) = d_k·σ_q²·σ_k², a seeded Monte Carlo, and an unscaled
softmax saturating at a large d_k."""

from __future__ import annotations

import functools
import math

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.scoring import dot_product_variance

TRACE = "scaling"
MISTAKES = ("variance-as-std", "variance-sum-not-product", "no-scale", "scale-by-dk")
PAIRS = (("variance-as-std", "variance-sum-not-product"),)


@functools.lru_cache(maxsize=8)
def _draws(dims: tuple[int, ...], samples: int, d_big: int, n_keys: int, seed: int,
           var_q: float, var_k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The trace's seeded samples: Monte Carlo variances (raw and scaled), then q and K."""
    rng = np.random.default_rng(seed)
    sd_q, sd_k = math.sqrt(var_q), math.sqrt(var_k)
    mc, mc_scaled = [], []
    for d in dims:
        Qs, Ks = rng.standard_normal((samples, d)) * sd_q, rng.standard_normal((samples, d)) * sd_k
        S = Qs @ Ks.T
        mc.append(float(S.var()))
        mc_scaled.append(float((S / math.sqrt(d)).var()))
    q = rng.standard_normal(d_big) * sd_q
    K = rng.standard_normal((n_keys, d_big)) * sd_k
    return np.array(mc), np.array(mc_scaled), q, K


def compute(inp: dict, s: Slips) -> dict:
    dims = inp["dims"]
    if np.any(dims != np.round(dims)):
        raise ValueError("input dims: expected whole numbers >= 1")
    ds = tuple(int(d) for d in dims)
    var_q, var_k, d_big = inp["var_q"], inp["var_k"], inp["d_big"]
    mc, mc_scaled, q, K = _draws(ds, inp["samples"], d_big, inp["n_keys"], inp["seed"], var_q, var_k)
    per_term = var_q + var_k if s.on("variance-sum-not-product") else var_q * var_k
    if s.ids:
        exact = np.array([d * per_term for d in ds])
    else:
        exact = np.array([dot_product_variance(d, var_q, var_k) for d in ds])
    if s.on("variance-as-std"):
        exact = np.sqrt(exact)
    raw = K @ q  # (n_keys,)
    scaled = raw / _ops.scale(d_big, s)
    quiet = Slips()
    a_raw, a_scaled = _ops.weights(raw, quiet), _ops.weights(scaled, quiet)
    return {"exact": exact, "monte_carlo": mc, "monte_carlo_scaled": mc_scaled,
            "exact_scaled": exact / np.array(ds, float), "raw_scores": raw, "scaled_scores": scaled,
            "weights_raw": a_raw, "weights_scaled": a_scaled,
            "grad_norm_raw": float(np.linalg.norm(np.diag(a_raw) - np.outer(a_raw, a_raw))),
            "grad_norm_scaled": float(np.linalg.norm(np.diag(a_scaled) - np.outer(a_scaled, a_scaled)))}
