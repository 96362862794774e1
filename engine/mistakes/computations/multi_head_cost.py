"""``multi-head-cost`` (§6, §13): parameters and FLOPs of multi-head attention, Table 1."""

from __future__ import annotations

import math

from engine.costs import layer_costs, multi_head_cost
from engine.mistakes.slips import Slips

TRACE = "multi-head-cost"
MISTAKES = ("params-no-wo", "params-per-head-dmodel", "flops-no-factor-2", "exponentials-one-head")
PAIRS = ()


def compute(inp: dict, s: Slips) -> dict:
    n, d, h, d_k, kernel = (inp[k] for k in ("n", "d_model", "heads", "d_k", "kernel"))
    if d_k is None and d % h:
        raise ValueError(f"input heads: got {h}, expected a divisor of d_model = {d} (or set d_k)")
    dk = d // h if d_k is None else d_k
    dv = dk
    cost = multi_head_cost(n, n, d, h, dk, dv)
    s.fact(h=h, d_k=dk, wo=cost.params["W_O"])
    params = cost.total_params
    if s.on("params-no-wo"):
        params -= cost.params["W_O"]
    elif s.on("params-per-head-dmodel"):
        params = 4 * h * d * d
    per = 1 if s.on("flops-no-factor-2") else 2  # FLOPs per multiply-add
    quad = per * h * n * n * (dk + dv)
    lin = per * n * d * h * (2 * dk + dv) + per * n * h * dv * d
    exps = n * n if s.on("exponentials-one-head") else cost.exponentials
    rows = layer_costs(n, d, kernel)
    return {"d_k": dk, "d_v": dv, "params": params, "flops": quad + lin, "exponentials": exps,
            "quadratic_flops": quad, "linear_flops": lin,
            "crossover_n": d * (2 * dk + 2 * dv) / (dk + dv),
            "operations": [r.operations for r in rows], "sequential": [r.sequential for r in rows],
            "path_length": [r.path_length for r in rows]}
