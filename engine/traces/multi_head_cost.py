"""Trace ``multi-head-cost`` (§6): parameters and FLOPs of multi-head attention, and Table 1.

Defaults: the notes' width d_h = 512 as d_model, with the base Transformer's h = 8 heads of
d_k = d_v = 64 (Vaswani et al., 2017, §3.2.2), over n = 100 positions. The last step puts the
student's n and d into Vaswani et al.'s Table 1 (self-attention vs recurrent vs convolutional
layers). The fused check recounts everything from the list of matrix products the layer runs
(``engine.costs``), not from the closed forms the steps use.
"""

from __future__ import annotations

import math

import numpy as np

from engine.costs import layer_costs, multi_head_cost
from engine.trace import InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines

INPUTS = [
    InputSpec("n", "int", 100, "sequence length (queries = keys, self-attention)", low=1,
              high=1_000_000),
    InputSpec("d_model", "int", 512, "model width (the notes' d_h = 512)", low=1, high=65536),
    InputSpec("heads", "int", 8, "number of heads h", low=1, high=1024),
    InputSpec("d_k", "int", None, "width per head (default d_model / h)", low=1, high=65536,
              optional=True),
    InputSpec("kernel", "int", 3, "convolution kernel width k for the comparison", low=2,
              high=1024),
]


def _big(x: float) -> str:
    """12,582,912 (≈ 12.6 M): digits grouped, with a short form for big numbers."""
    text = f"{int(x):,}"
    for size, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= size and x >= 1e4:
            return f"{text} (≈ {x / size:.1f} {unit})"
    return text


def build(n: int, d_model: int, heads: int, d_k: int | None, kernel: int) -> Trace:
    inputs = {"n": n, "d_model": d_model, "heads": heads, "d_k": d_k, "kernel": kernel}
    if d_k is None and d_model % heads:
        raise ValueError(f"input heads: got {heads}, expected a divisor of d_model = {d_model} "
                         "(or set d_k)")
    dk = d_model // heads if d_k is None else d_k
    dv, h, d = dk, heads, d_model
    steps = [Step(
        "Sizes",
        "d_k = d_v = d_model / h  (unless set);  W_Q, W_K, W_V ∈ ℝ^(d_model × h·d_k),  "
        "W_O ∈ ℝ^(h·d_v × d_model)",
        lines(f"d_model = {d}, h = {h}, d_k = d_v = {dk}" + (f" = {d} / {h}" if d_k is None else ""),
              f"h·d_k = {h * dk}" + (" = d_model" if h * dk == d else " ≠ d_model")),
        {"d_k": dk, "d_v": dv},
        "Splitting d_model into h heads keeps the total width, so h changes how the width is "
        "used, not how much of it there is.",
    )]

    params = {"W_Q": d * h * dk, "W_K": d * h * dk, "W_V": d * h * dv, "W_O": h * dv * d}
    total_p = sum(params.values())
    steps.append(Step(
        "Parameters",
        "|W_Q| + |W_K| + |W_V| + |W_O| = d_model·h·d_k·2 + d_model·h·d_v·2",
        lines(*(f"{k} = {_big(c)}" for k, c in params.items()),
              f"total = {_big(total_p)}" + (f" = 4·d_model² = 4·{d}²" if h * dk == d else "")),
        {"params": total_p},
        "No n anywhere: the same weights serve any sequence length. Biases, if used, add "
        f"only {3 * h * dk + d} more.",
    ))

    proj = 2 * n * d * h * (2 * dk + dv)  # Q, K, V
    scores = 2 * h * n * n * dk
    mix = 2 * h * n * n * dv
    out = 2 * n * h * dv * d
    exps = h * n * n
    total_f = proj + scores + mix + out
    steps.append(Step(
        "FLOPs of one forward pass",
        "projections 2·n·d_model·h·(2d_k + d_v),  scores 2·h·n²·d_k,  α V 2·h·n²·d_v,  "
        "output 2·n·h·d_v·d_model  (a product (m×k)(k×p) = 2mkp FLOPs)",
        lines(f"Q, K, V projections: 2·{n}·{d}·{h}·({2 * dk + dv}) = {_big(proj)}",
              f"scores Q Kᵀ: 2·{h}·{n}²·{dk} = {_big(scores)}",
              f"weighted sums α V: 2·{h}·{n}²·{dv} = {_big(mix)}",
              f"output concat·W_O: 2·{n}·{h * dv}·{d} = {_big(out)}",
              f"total = {_big(total_f)} FLOPs, plus {_big(exps)} exponentials in the softmax"),
        {"flops": total_f, "exponentials": exps},
        "The projections grow like n·d_model², the attention itself like n²·d_model.",
    ))

    quad, lin = scores + mix, proj + out
    cross = d * (2 * dk + 2 * dv) / (dk + dv)  # n where the two parts cost the same
    steps.append(Step(
        "Which part dominates",
        "2·h·n²·(d_k + d_v) = 2·n·d_model·h·(2d_k + 2d_v)  ⇔  n* = 2·d_model",
        lines(f"n²-part (scores + α V) = {_big(quad)}, n-part (projections) = {_big(lin)}",
              f"n²-part / n-part = {quad / lin:.3g} = n / n*",
              f"n* = d_model·(2d_k + 2d_v) / (d_k + d_v) = {cross:g}"),
        {"quadratic_flops": quad, "linear_flops": lin, "crossover_n": cross},
        ("At this length the projections cost more than attending: the n² term only takes "
         "over beyond n*." if quad < lin else
         "At this length attending costs more than projecting: this is where tiled "
         "(FlashAttention) kernels and sparse or linear attention pay off."),
    ))

    rows = layer_costs(n, d, kernel)
    steps.append(Step(
        "Table 1 of Vaswani et al. (2017) at this n and d",
        "per-layer work, sequential operations, longest path between two positions",
        lines(*(f"{r.layer}: {r.complexity} = {_big(r.operations)}, sequential {r.sequential:g}, "
                f"path {r.path_length:g}" for r in rows)),
        {"operations": [r.operations for r in rows], "sequential": [r.sequential for r in rows],
         "path_length": [r.path_length for r in rows]},
        (f"n = {n} < d = {d}: self-attention does less work per layer than a recurrent one"
         if n < d else f"n = {n} ≥ d = {d}: per layer, self-attention now does as much work "
         "as a recurrent layer or more")
        + f", and it links any two positions in one step where the recurrence needs {n}. "
        "The convolution's path log_k(n) assumes dilated kernels (contiguous ones need n/k "
        "layers); restricting attention to a neighbourhood of r (here r = k) trades path "
        "length back for work.",
    ))

    cost = multi_head_cost(n, n, d, h, dk, dv)
    f_rows = layer_costs(n, d, kernel)
    return Trace(
        name="multi-head-cost",
        title="What multi-head attention costs",
        section=6,
        inputs=inputs,
        steps=steps,
        result={"params": total_p, "flops": total_f, "exponentials": exps,
                "quadratic_flops": quad,
                "operations": [r.operations for r in rows],
                "path_length": [r.path_length for r in rows]},
        fused={"params": cost.total_params, "flops": cost.total_flops,
               "exponentials": cost.exponentials,
               "quadratic_flops": cost.flops["Q Kᵀ"] + cost.flops["α V"],
               "operations": [float(n * n * d), float(n * d * d), float(kernel * n * d * d),
                              float(min(n, kernel) * n * d)],
               "path_length": [1.0, float(n), float(f_rows[2].path_length),
                               float(math.ceil(n / min(n, kernel)))]},
        source=source_of(INPUTS, inputs, "built"),
        summary=f"Parameters and FLOPs of {h}-head attention with d_model = {d} over n = {n} "
                "positions, and how self-attention compares with recurrent and convolutional "
                "layers (Vaswani et al., 2017, Table 1).",
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: round lengths and widths, a dividing number of heads."""
    return {"n": int(_draw.choice(rng, [10, 20, 50, 100, 200, 500, 1000])),
            "d_model": int(_draw.choice(rng, [64, 128, 256, 512])),
            "heads": int(_draw.choice(rng, [2, 4, 8])), "d_k": None,
            "kernel": int(_draw.choice(rng, [3, 5]))}
