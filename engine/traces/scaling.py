"""Trace ``scaling`` (§8): why scores are divided by √d_k.

With qᵢ, kᵢ independent, mean 0, variances σ_q², σ_k² (1 by default, as in the notes):
Var(q·k) = Σᵢ Var(qᵢkᵢ) = d_k·σ_q²·σ_k² exactly (``engine.scoring.dot_product_variance``). A
seeded Monte Carlo estimate sits next to that value for several d_k; then one query against a
few keys at a large d_k shows the softmax saturating without the scaling, and its gradient
vanishing. The notes give only the formula (and √64 = 8), so the samples are seeded.
"""

from __future__ import annotations

import math

import numpy as np

from engine.scoring import dot_product_variance, dot_scores, scaled_dot_scores
from engine.softmax import softmax
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, sub, v

INPUTS = [
    InputSpec("dims", "vector", [1, 4, 16, 64, 256], "key sizes d_k to compare", low=1,
              high=4096),
    InputSpec("samples", "int", 1000,
              "Monte Carlo: this many queries and keys (every query·key pair is a sample)",
              low=10, high=2000),
    InputSpec("d_big", "int", 64, "d_k for the saturation demo", low=1, high=4096),
    InputSpec("n_keys", "int", 6, "number of keys in the saturation demo", low=2, high=50),
    InputSpec("seed", "int", 2, "seed for the random vectors", low=0),
    InputSpec("var_q", "scalar", 1.0, "σ_q², the variance of each query entry", low=0.0,
              high=16.0, low_open=True),
    InputSpec("var_k", "scalar", 1.0, "σ_k², the variance of each key entry", low=0.0,
              high=16.0, low_open=True),
]


def _jacobian_norm(a: np.ndarray) -> float:
    """‖∂softmax/∂s‖_F = ‖diag(α) − α αᵀ‖_F: how much the weights can still move."""
    return float(np.linalg.norm(np.diag(a) - np.outer(a, a)))


def build(dims: np.ndarray, samples: int, d_big: int, n_keys: int, seed: int, var_q: float,
          var_k: float) -> Trace:
    inputs = {"dims": dims, "samples": samples, "d_big": d_big, "n_keys": n_keys, "seed": seed,
              "var_q": var_q, "var_k": var_k}
    if np.any(dims != np.round(dims)):
        raise ValueError(f"input dims: got {v(dims)}, expected whole numbers >= 1")
    ds = [int(d) for d in dims]
    rng = np.random.default_rng(seed)
    unit = var_q == 1.0 and var_k == 1.0
    term = var_q * var_k  # Var(qᵢkᵢ) = E[qᵢ²]E[kᵢ²] = σ_q²σ_k²
    exact = np.array([d * term for d in ds])  # (len(dims),)
    exact_scaled = exact / np.array(ds, float)
    steps = [Step(
        "Exact variance",
        "Var(q·k) = Σᵢ₌₁^d_k Var(qᵢkᵢ) = Σᵢ E[qᵢ²]E[kᵢ²] = "
        + ("d_k" if unit else "d_k·σ_q²·σ_k²"),
        lines(*(f"d_k = {d}: Var = {d}, std = √{d} = {n(math.sqrt(d))}" if unit else
                f"d_k = {d}: Var = {d}·{n(var_q)}·{n(var_k)} = {n(x)}, std = {n(math.sqrt(x))}"
                for d, x in zip(ds, exact))),
        {"exact": exact},
        "Each product qᵢkᵢ has mean 0 and variance "
        + ("1" if unit else f"σ_q²σ_k² = {n(var_q)}·{n(var_k)} = {n(term)}")
        + ", and independent variances add up.",
    )]

    sd_q, sd_k = math.sqrt(var_q), math.sqrt(var_k)
    draws = [(rng.standard_normal((samples, d)) * sd_q, rng.standard_normal((samples, d)) * sd_k)
             for d in ds]
    mc, mc_fused, mc_scaled = [], [], []
    for (Qs, Ks), d in zip(draws, ds):
        S = Qs @ Ks.T  # (samples, samples): every pair q_a·k_b is one sample
        mc.append(float(S.var()))
        mc_scaled.append(float((S / math.sqrt(d)).var()))
        mc_fused.append(float(dot_scores(Qs, Ks).var()))
    steps.append(Step(
        "Monte Carlo check",
        "Var̂(q·k) over N² pairs,  q, k ~ N(0, I)" if unit else
        "Var̂(q·k) over N² pairs,  q ~ N(0, σ_q² I), k ~ N(0, σ_k² I)",
        lines(f"{samples} queries × {samples} keys = {samples * samples} dot products per d_k",
              *(f"d_k = {d:>4}: estimate {n(e, 3):>8}  (exact {n(x)})"
                for d, e, x in zip(ds, mc, exact))),
        {"monte_carlo": np.array(mc)},
        f"Seeded (seed {seed}); the estimates wobble by a few percent around "
        + ("d_k." if unit else "d_k·σ_q²·σ_k²."),
    ))
    steps.append(Step(
        "After dividing by √d_k",
        "Var(q·k / √d_k) = d_k / d_k = 1" if unit else
        "Var(q·k / √d_k) = d_k·σ_q²·σ_k² / d_k = σ_q²·σ_k²",
        lines(*(f"d_k = {d:>4}: estimate {n(e, 3)}" for d, e in zip(ds, mc_scaled))),
        {"monte_carlo_scaled": np.array(mc_scaled), "exact_scaled": exact_scaled},
        "Whatever d_k is, the scaled scores have spread about "
        + ("1." if unit else f"σ_q²σ_k² = {n(term)}."),
    ))

    q = rng.standard_normal(d_big) * sd_q
    K = rng.standard_normal((n_keys, d_big)) * sd_k
    raw = K @ q  # (n_keys,)
    scaled = raw / math.sqrt(d_big)
    e = np.exp(raw - raw.max())
    a_raw = e / e.sum()
    e2 = np.exp(scaled - scaled.max())
    a_scaled = e2 / e2.sum()
    steps.append(Step(
        f"One query, {n_keys} keys, d_k = {d_big}",
        "α = softmax(q·Kⱼ)  vs  softmax(q·Kⱼ / √d_k)",
        lines(f"raw scores    = {v(raw, 2)}", f"softmax       = {v(a_raw, 4)}",
              f"scaled scores = {v(scaled, 3)}", f"softmax       = {v(a_scaled, 4)}"),
        {"raw_scores": raw, "weights_raw": a_raw, "weights_scaled": a_scaled},
        (f"Unscaled, the scores have a standard deviation of about √{d_big} = "
         f"{n(math.sqrt(d_big), 2)}, so" if unit else
         f"Unscaled, the scores have a standard deviation of about √({d_big}·{n(term)}) = "
         f"{n(math.sqrt(d_big * term), 2)}, so")
        + f" the largest takes {a_raw.max():.6f} of the weight; "
        f"scaled, the top weight is {n(a_scaled.max(), 3)} and the others still count.",
    ))

    j_raw, j_scaled = _jacobian_norm(a_raw), _jacobian_norm(a_scaled)
    steps.append(Step(
        "Gradient through the softmax",
        "∂α/∂s = diag(α) − α αᵀ,  size ‖·‖_F",
        lines(f"unscaled: {j_raw:.3g}", f"scaled:   {j_scaled:.3g}",
              f"ratio:    {j_scaled / max(j_raw, 1e-300):.3g}"),
        {"grad_norm_raw": j_raw, "grad_norm_scaled": j_scaled},
        "A saturated softmax is almost one-hot, and a one-hot α makes diag(α) − α αᵀ almost zero: "
        "the scores get next to no gradient, so learning stalls.",
    ))

    trace = Trace(
        name="scaling",
        title="Why divide by √d_k",
        section=8,
        inputs=inputs,
        steps=steps,
        result={"exact": exact, "exact_scaled": exact_scaled, "monte_carlo": np.array(mc),
                "scaled_scores": scaled, "weights_raw": a_raw, "weights_scaled": a_scaled},
        fused={"exact": np.array([dot_product_variance(d, var_q, var_k) for d in ds]),
               "exact_scaled": np.array([dot_product_variance(d, var_q, var_k) / d for d in ds]),
               "monte_carlo": np.array(mc_fused), "scaled_scores": scaled_dot_scores(q, K),
               "weights_raw": softmax(dot_scores(q, K)),
               "weights_scaled": softmax(scaled_dot_scores(q, K))},
        source=source_of(INPUTS, inputs, "built"),
        summary=("Var(q·k) = d_k" if unit else "Var(q·k) = d_k·σ_q²·σ_k²")
        + ", checked by a seeded Monte Carlo; then what an unscaled softmax does at a large d_k.",
        heatmaps=[HeatmapData(f"One query over {n_keys} keys at d_k = {d_big}",
                              np.vstack([a_raw, a_scaled]), ["q·k", "q·k / √d_k"],
                              [f"K{sub(j + 1)}" for j in range(n_keys)])],
    )
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: three key sizes, 100 samples, simple variances, a saturation demo."""
    dims = sorted(rng.choice([1, 2, 4, 8, 16, 32, 64], size=3, replace=False).tolist())
    return {"dims": [float(d) for d in dims], "samples": 100,
            "d_big": int(_draw.choice(rng, [16, 64, 100])), "n_keys": int(rng.integers(3, 7)),
            "seed": _draw.seed(rng), "var_q": float(_draw.choice(rng, [0.5, 1.0, 2.0, 4.0])),
            "var_k": float(_draw.choice(rng, [0.5, 1.0, 2.0]))}
