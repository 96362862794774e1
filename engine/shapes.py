"""Shapes and parameter counts of multi-head attention (Vaswani et al., 2017, §3.2.2).

With model width d_model split into h heads, each head works in d_k = d_v = d_model / h, so
the four projections W_Q, W_K, W_V (d_model × d_model, read as h slices of d_model × d_k) and
the output mix W^O (h·d_v × d_model) hold 4·d_model² weights (plus 4·d_model biases if used),
whatever h is. The score matrices are h of n × m (queries × keys).
"""

from __future__ import annotations

from engine._validate import check_positive_int


def multi_head_shapes(n: int, d_model: int, heads: int, m: int | None = None,
                      bias: bool = False) -> dict[str, object]:
    """Sizes of one multi-head attention layer over n queries and m keys (m = n: self-attention).

    Args:
        n: number of query positions.
        d_model: model width; must be a multiple of ``heads``.
        heads: number of heads h.
        m: number of key/value positions (default n).
        bias: count a bias vector per projection.

    Returns:
        ``d_head``; ``shapes`` (name -> tuple) of Q, K, V, one head's scores, the concatenation,
        W_Q/W_K/W_V/W_O and the output; ``params`` (weights, and biases if asked);
        ``score_entries`` (h·n·m).

    Raises:
        ValueError: for a non-positive size or heads that do not divide d_model.
    """
    n = check_positive_int(n, "n")
    d_model = check_positive_int(d_model, "d_model")
    heads = check_positive_int(heads, "heads")
    m = n if m is None else check_positive_int(m, "m")
    if d_model % heads:
        raise ValueError(f"heads: got {heads}, expected a divisor of d_model = {d_model}")
    d_head = d_model // heads
    shapes = {
        "Q": (n, d_model), "K": (m, d_model), "V": (m, d_model),
        "Q_head": (n, d_head), "scores_head": (n, m), "concat": (n, heads * d_head),
        "W_Q": (d_model, d_model), "W_K": (d_model, d_model), "W_V": (d_model, d_model),
        "W_O": (heads * d_head, d_model), "output": (n, d_model),
    }
    weights = sum(r * c for key, (r, c) in shapes.items() if key.startswith("W_"))
    return {"d_head": d_head, "shapes": shapes,
            "params": weights + (4 * d_model if bias else 0),
            "score_entries": heads * n * m}
