"""``heatmap-reading`` (§11): the attention table's shape, rows, columns and sharpness."""

from __future__ import annotations

import numpy as np

from engine.mistakes.slips import Slips
from engine.softmax import softmax

TRACE = "heatmap-reading"
MISTAKES = ("shape-transposed", "softmax-wrong-axis", "entropy-nats")
PAIRS = ()


def compute(inp: dict, s: Slips) -> dict:
    source, target, rows, weights, missing_rows = (
        inp[k] for k in ("source", "target", "rows", "weights", "missing_rows"))
    R, S = weights.shape
    for w in rows:
        if w not in target:
            raise ValueError(f"input rows: {w!r} is not in the target ({' '.join(target)})")
    missing = [w for w in target if w not in rows]
    if missing and len(missing) != missing_rows.shape[0]:
        raise ValueError(f"input missing_rows: got {missing_rows.shape[0]} rows, expected {len(missing)}")
    extra = dict(zip(missing, missing_rows)) if missing else {}
    full = np.array([weights[rows.index(w)] if w in rows else extra[w] for w in target])
    wrong_axis = s.on("softmax-wrong-axis")
    axis = 0 if wrong_axis else 1
    with np.errstate(divide="ignore"):
        table = softmax(np.log(full), axis=axis)
    sums = weights.sum(axis=axis)
    column_mass = full.sum(axis=1 if wrong_axis else 0)
    log = np.log if s.on("entropy-nats") else np.log2
    normalised = full / full.sum(axis=1, keepdims=True)  # (T, S) each row a distribution
    entropy = np.array([float(-(r[r > 0] * log(r[r > 0])).sum()) for r in normalised])
    counts = (S, R) if s.on("shape-transposed") else (R, S)
    return {"rows": counts[0], "columns": counts[1], "row_sums": sums, "table": table,
            "column_mass": column_mass, "entropy_bits": entropy}
