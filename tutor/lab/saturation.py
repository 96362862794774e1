"""``saturation``: why scores are divided by √d_k — Var(q·k) = d_k, and what unscaled scores
do to the softmax (engine: :mod:`engine.lab.scaling`)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from tutor.lab import jsonout
from tutor.lab.report import Part, Style, box
from tutor.plot import Series, line_plot


def bars(s: Any) -> tuple[tuple[str, ...], int]:
    return ("saturation",), len(s.d_ks)


def report(res: Any, s: Any, style: Style) -> list[Part]:
    """A table, the legend sentence and a plot."""
    from rich.table import Table  # deferred: loads rich (start-up time)

    table = Table(title=f"softmax over {res.n_keys} keys, q and k with unit-variance components; "
                        f"{res.samples} pairs and {res.trials} softmaxes per d_k; seed {res.seed}",
                  box=box(style))
    for col in ("d_k", "Var MC", "± s.e.", "exact", "H scaled", "H raw", "grad scaled",
                "grad raw", "max α raw"):
        table.add_column(col, justify="right")
    for p in res.points:
        table.add_row(str(p.d_k), f"{p.var_mc:.2f}", f"{p.var_se:.2f}", f"{p.var_exact:g}",
                      f"{p.entropy_scaled:.3f}", f"{p.entropy_unscaled:.3f}",
                      f"{p.grad_scaled:.4f}", f"{p.grad_unscaled:.4f}", f"{p.max_weight_unscaled:.3f}")
    d_ks = [p.d_k for p in res.points]
    series = [Series("/√d_k", [p.entropy_scaled for p in res.points], d_ks),
              Series("raw", [p.entropy_unscaled for p in res.points], d_ks)]
    parts: list[Part] = [
        table,
        f"Var MC: Monte Carlo Var(q·k); exact: Σᵢ Var(qᵢkᵢ) = d_k. H: softmax entropy in "
        f"nats (uniform = ln {res.n_keys} = {math.log(res.n_keys):.3f}); grad: the largest "
        "entry max|∂α/∂s| of the softmax Jacobian diag(α) − ααᵀ (at most 1/4); scaled: "
        "scores q·k/√d_k, raw: q·k. Raw scores saturate the softmax as d_k grows (entropy "
        "and gradient fall towards 0, one weight takes it all); scaled ones stay put.",
        "",
        line_plot(series, width=style.width, height=12, title="entropy (nats) vs d_k, log x",
                  x_label="d_k", logx=True, markers=True, ascii=style.ascii),
    ]
    if res.stopped:
        parts.append("(stopped early)")
    return parts


def to_json(res: Any, s: Any) -> dict[str, Any]:
    return jsonout.header(
        "saturation", n_keys=res.n_keys, samples=res.samples, trials=res.trials, seed=res.seed,
        interrupted=res.stopped, max_entropy=math.log(res.n_keys),
        points=[asdict(p) for p in res.points],
    )


def from_options(*, min_d: int, max_d: int, keys: int, samples: int, trials: int,
                 seed: int) -> Any:
    """d_k doubling from ``min_d`` to ``max_d``; ``ValueError`` naming the bad option."""
    from engine.lab.scaling import SaturationSettings, doubling_sizes  # deferred: loads numba (start-up time)

    d_ks = doubling_sizes(min_d, max_d, names=("min_d", "max_d"))
    return SaturationSettings(tuple(d_ks), keys, samples, trials, seed)
