"""``scaling``: time and memory of plain vs tiled attention as n doubles, with fitted exponents
(engine: :mod:`engine.lab.scaling`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tutor.calibration import use_calibrated_blocks
from tutor.lab import jsonout
from tutor.lab.report import Part, Style, box
from tutor.plot import Series, line_plot


def run(settings: Any, *, on_progress: Any = None, should_stop: Any = None) -> Any:
    """Apply this machine's tile sizes (measured once and cached: :mod:`tutor.calibration`),
    then run :func:`engine.lab.scaling.scaling`."""
    from engine.lab.scaling import scaling  # deferred: loads numba (start-up time)

    use_calibrated_blocks()
    return scaling(settings, on_progress=on_progress, should_stop=should_stop)


def bars(s: Any) -> tuple[tuple[str, ...], int]:
    return ("scaling",), len(s.sizes) + 1


def report(res: Any, s: Any, style: Style) -> list[Part]:
    """A table, two sentences and two log-log plots."""
    from rich.table import Table  # deferred: loads rich (start-up time)

    fit = res.fit_points()
    exps = res.exponents()
    table = Table(title=f"plain vs tiled attention: one head, d = {res.d}, {res.dtype}, "
                        f"{res.threads} thread(s), best of {res.repeat}, seed {res.seed}, "
                        f"tiles {res.blocks[0]}×{res.blocks[1]}",
                  box=box(style))
    for col in ("n", "plain time", "×", "tiled time", "×", "plain memory", "tiled memory"):
        table.add_column(col, justify="right")
    prev = None
    for p in res.points:
        table.add_row(str(p.n), _ms(p.plain_seconds), _ratio(p.plain_seconds, prev, "plain_seconds"),
                      _ms(p.tiled_seconds), _ratio(p.tiled_seconds, prev, "tiled_seconds"),
                      _mib(p.plain_bytes), _mib(p.tiled_bytes))
        prev = p
    fitted = ", ".join(str(p.n) for p in fit)
    parts: list[Part] = [
        table,
        f"Fitted exponent p in t ≈ c·nᵖ (least squares of log t on log n, n = {fitted}): "
        f"time plain {_exp(exps['plain_seconds'])}, tiled {_exp(exps['tiled_seconds'])}; "
        f"memory plain {_exp(exps['plain_bytes'])}, tiled {_exp(exps['tiled_bytes'])}.",
        "× = time over the previous n: 4 when doubling n doubles both loops. Memory is "
        "computed from the buffers each kernel allocates: plain holds the n×n weights "
        "(∝ n²); tiled one tile per thread (fixed) plus the n×d output and a blocked copy "
        "of K (∝ n), so its exponent reaches 1 only once those outgrow the tiles.",
        f"The tiles ({res.blocks[0]} queries × {res.blocks[1]} keys) are the fastest of a "
        "few sizes timed on this machine the first time the lab ran (kept in the tutor's "
        "cache folder).",
    ]
    ns = [p.n for p in res.points]
    series_t = [Series("plain", [p.plain_seconds * 1e3 for p in res.points], ns),
                Series("tiled", [p.tiled_seconds * 1e3 for p in res.points], ns)]
    series_m = [Series("plain", [p.plain_bytes / 2**20 for p in res.points], ns),
                Series("tiled", [p.tiled_bytes / 2**20 for p in res.points], ns)]
    for title, series in (("time (ms) vs n, log-log", series_t),
                          ("memory (MiB) vs n, log-log", series_m)):
        parts += ["", line_plot(series, width=style.width, height=12, title=title, x_label="n",
                                logx=True, logy=True, markers=True, ascii=style.ascii)]
    if res.stopped:
        parts.append("(stopped early)")
    return parts


def to_json(res: Any, s: Any) -> dict[str, Any]:
    from engine.lab.scaling import FIT_MIN_N  # deferred: loads numba (start-up time)

    fit, exps = res.fit_points(), res.exponents()
    return jsonout.header(
        "scaling", d=res.d, dtype=res.dtype, repeat=res.repeat, seed=res.seed,
        threads=res.threads, interrupted=res.stopped, points=[asdict(p) for p in res.points],
        fit={"min_n": FIT_MIN_N, "n": [p.n for p in fit], "exponents": exps},
        memory="computed from the buffers each kernel allocates",
        blocks={"block_q": res.blocks[0], "block_k": res.blocks[1]},
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"


def _mib(b: int) -> str:
    return f"{b / 2**20:.2f} MiB" if b < 100 * 2**20 else f"{b / 2**20:.0f} MiB"


def _ratio(value: float, prev: Any, key: str) -> str:
    return "" if prev is None else f"{value / getattr(prev, key):.1f}"


def _exp(p: float | None) -> str:
    return "—" if p is None else f"{p:.2f}"


def from_options(*, min_n: int, max_n: int, d: int, repeat: int, seed: int, dtype: str) -> Any:
    """Sizes doubling from ``min_n`` to ``max_n``; ``ValueError`` naming the bad option."""
    from engine.lab.scaling import ScalingSettings, doubling_sizes  # deferred: loads numba (start-up time)

    return ScalingSettings(tuple(doubling_sizes(min_n, max_n)), d, seed, repeat, dtype)
