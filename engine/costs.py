"""What multi-head attention costs: parameters, FLOPs, and Vaswani et al.'s Table 1.

Vaswani et al. (2017), "Attention Is All You Need", §3.2.2 (multi-head attention) and §4,
Table 1: per-layer complexity, sequential operations and maximum path length for
self-attention, recurrent and convolutional layers of width d over n positions.

Counting conventions: a product of an (m, k) and a (k, p) matrix costs 2·m·k·p FLOPs (one
multiply and one add per term); the softmax is counted as exponentials (one per score), not
FLOPs; the projections have no biases (as ``engine.attention.multi_head_attention``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine._validate import check_positive_int


@dataclass(frozen=True)
class MultiHeadCost:
    """Parameters and forward FLOPs of one multi-head attention layer."""

    params: dict[str, int]          # W_Q, W_K, W_V, W_O → number of weights
    products: list[tuple[str, int, int, int]]  # (what, m, k, p) for every matrix product
    flops: dict[str, int]           # product name → 2·m·k·p, summed over heads
    exponentials: int               # h·n_q·n_kv, one per score

    @property
    def total_params(self) -> int:
        return sum(self.params.values())

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())


def multi_head_cost(n_q: int, n_kv: int, d_model: int, heads: int, d_k: int | None = None,
                    d_v: int | None = None) -> MultiHeadCost:
    """Parameters and FLOPs of multi-head attention, listed product by product.

    Args:
        n_q: query positions.
        n_kv: key/value positions (= n_q for self-attention).
        d_model: model width (inputs and output).
        heads: h.
        d_k: per-head query/key width; default d_model / h (must then divide).
        d_v: per-head value width; default d_k.

    Returns:
        :class:`MultiHeadCost`.

    Raises:
        ValueError: on non-positive sizes, or d_model not divisible by h when d_k is not given.
    """
    nq = check_positive_int(n_q, "n_q")
    nkv = check_positive_int(n_kv, "n_kv")
    d = check_positive_int(d_model, "d_model")
    h = check_positive_int(heads, "heads")
    if d_k is None:
        if d % h:
            raise ValueError(f"heads: d_model = {d} is not divisible by heads = {h}; pass d_k "
                             "or choose a divisor")
        d_k = d // h
    dk = check_positive_int(d_k, "d_k")
    dv = dk if d_v is None else check_positive_int(d_v, "d_v")
    shapes = {"W_Q": (d, h * dk), "W_K": (d, h * dk), "W_V": (d, h * dv), "W_O": (h * dv, d)}
    params = {name: r * c for name, (r, c) in shapes.items()}
    products = [("Q = X W_Q", nq, d, h * dk), ("K = X W_K", nkv, d, h * dk),
                ("V = X W_V", nkv, d, h * dv)]
    products += [(f"head {i + 1}: Q Kᵀ", nq, dk, nkv) for i in range(h)]
    products += [(f"head {i + 1}: α V", nq, nkv, dv) for i in range(h)]
    products.append(("concat W_O", nq, h * dv, d))
    flops: dict[str, int] = {}
    for what, m, k, p in products:
        key = what.split(": ")[-1]                         # heads summed under one name
        flops[key] = flops.get(key, 0) + 2 * m * k * p
    return MultiHeadCost(params, products, flops, h * nq * nkv)


@dataclass(frozen=True)
class LayerCost:
    """One row of Vaswani et al.'s Table 1, evaluated at the given n, d."""

    layer: str
    complexity: str                 # the O(·) the paper prints
    operations: float               # that expression at n, d (constant factors dropped)
    sequential: float               # minimum sequential operations
    path_length: float              # maximum path length between any two positions


def layer_costs(n: int, d: int, kernel: int = 3, neighbourhood: int | None = None) -> list[LayerCost]:
    """Table 1 of Vaswani et al. (2017) with numbers put in for sequence length n and width d.

    Args:
        n: sequence length.
        d: representation width.
        kernel: convolution kernel width k (≥ 2).
        neighbourhood: r for restricted self-attention; default min(n, kernel).

    Returns:
        Rows for self-attention, recurrent, convolutional and restricted self-attention.
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    k = check_positive_int(kernel, "kernel", minimum=2)
    r = min(n, k) if neighbourhood is None else check_positive_int(neighbourhood, "neighbourhood")
    return [
        LayerCost("self-attention", "O(n²·d)", float(n * n * d), 1.0, 1.0),
        LayerCost("recurrent", "O(n·d²)", float(n * d * d), float(n), float(n)),
        LayerCost("convolutional", "O(k·n·d²)", float(k * n * d * d), 1.0,
                  float(max(1, math.ceil(math.log(n, k) - 1e-12)))),
        LayerCost("self-attention (restricted)", "O(r·n·d)", float(r * n * d), 1.0,
                  float(math.ceil(n / r))),
    ]
