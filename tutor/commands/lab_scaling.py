"""`attn-tutor lab scaling` and `attn-tutor lab saturation` (engine: ``engine.scaling``).

``register(app)`` adds both subcommands to the ``lab`` sub-app. Only typer is imported at
module level; the engine, numpy and Rich load inside the commands.

``--json`` prints one object (schema 1):

- scaling: ``schema, experiment="scaling", d, dtype, repeat, seed, threads, stopped,
  points[] {n, plain_seconds, tiled_seconds, plain_bytes, tiled_bytes},
  fit {min_n, n[], exponents {plain_seconds, tiled_seconds, plain_bytes, tiled_bytes}},
  memory`` (a note: bytes are computed from the buffers each kernel allocates).
- saturation: ``schema, experiment="saturation", n_keys, samples, trials, seed, stopped,
  max_entropy (= ln n_keys), points[] {d_k, var_mc, var_se, var_exact, entropy_scaled,
  entropy_unscaled, grad_scaled, grad_unscaled, max_weight_scaled, max_weight_unscaled}``.
"""

from __future__ import annotations

from typing import Annotated

import typer

SCALING_HELP = """Time and memory of plain vs tiled attention as n doubles, with fitted exponents.

Plain attention builds the n×n weight matrix; the tiled (FlashAttention-style) kernel keeps one tile per thread. Both do n² work, so time grows like n² for both; memory grows like n² vs n. Times are the best of --repeat calls; memory is computed from the buffers each kernel allocates.
"""

SATURATION_HELP = """Why divide by √d_k: Var(q·k) = d_k, and what unscaled scores do to the softmax.

Monte Carlo variance of q·k for q, k with unit-variance components (next to the exact value d_k), and the softmax's entropy and largest gradient max|∂α/∂s| with and without the 1/√d_k scaling, for d_k doubling from --min-d to --max-d.
"""


def register(app: typer.Typer) -> None:
    """Add ``scaling`` and ``saturation`` to the ``lab`` sub-app."""
    app.command(name="scaling", help=SCALING_HELP)(scaling)
    app.command(name="saturation", help=SATURATION_HELP)(saturation)


def scaling(
    min_n: Annotated[int, typer.Option("--min-n", min=1, help="Smallest sequence length.")] = 256,
    max_n: Annotated[int, typer.Option("--max-n", min=1, help="Largest sequence length "
                                       "(n doubles from --min-n up to this).")] = 4096,
    d: Annotated[int, typer.Option("--d", min=1, help="Head dimension d_k = d_v.")] = 64,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Calls per kernel and n; "
                                        "the fastest counts.")] = 3,
    seed: Annotated[int, typer.Option("--seed", help="Seed for Q, K, V.")] = 0,
    float64: Annotated[bool, typer.Option("--float64", help="Use float64 (default float32).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON (schema 1).")] = False,
) -> None:
    from tutor.errors import user_errors

    user_errors(run_scaling)(min_n=min_n, max_n=max_n, d=d, repeat=repeat, seed=seed,
                             dtype="float64" if float64 else "float32", as_json=as_json)


def saturation(
    min_d: Annotated[int, typer.Option("--min-d", min=1, help="Smallest d_k.")] = 2,
    max_d: Annotated[int, typer.Option("--max-d", min=1, help="Largest d_k (doubling).")] = 512,
    keys: Annotated[int, typer.Option("--keys", min=2, help="Keys per softmax.")] = 10,
    samples: Annotated[int, typer.Option("--samples", min=2, help="(q, k) pairs for the "
                                         "variance, per d_k.")] = 20_000,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Softmaxes averaged per d_k.")] = 2_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random q and k.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON (schema 1).")] = False,
) -> None:
    from tutor.errors import user_errors

    user_errors(run_saturation)(min_d=min_d, max_d=max_d, keys=keys, samples=samples,
                                trials=trials, seed=seed, as_json=as_json)


# --------------------------------------------------------------------------- the work

def run_scaling(*, min_n: int, max_n: int, d: int, repeat: int, seed: int, dtype: str,
                as_json: bool) -> None:
    """Run the scaling experiment and print a table and two plots, or JSON."""
    import json
    from dataclasses import asdict

    from engine.scaling import FIT_MIN_N, doubling_sizes, scaling_experiment
    from tutor.terminal import use_color

    sizes = doubling_sizes(min_n, max_n)
    with _Progress("scaling") as report:
        res = scaling_experiment(sizes, d, seed=seed, repeat=repeat, dtype=dtype, on_progress=report)
    if as_json:
        fit, exps = res.fit_points(), res.exponents()
        print(json.dumps({
            "schema": 1, "experiment": "scaling", "d": res.d, "dtype": res.dtype,
            "repeat": res.repeat, "seed": res.seed, "threads": res.threads, "stopped": res.stopped,
            "points": [asdict(p) for p in res.points],
            "fit": {"min_n": FIT_MIN_N, "n": [p.n for p in fit], "exponents": exps},
            "memory": "computed from the buffers each kernel allocates",
        }, indent=2))
        return
    con = _console()
    for part in scaling_parts(res, ascii=not use_color()):
        _show(con, part)


def run_saturation(*, min_d: int, max_d: int, keys: int, samples: int, trials: int, seed: int,
                   as_json: bool) -> None:
    """Run the saturation experiment and print a table and a plot, or JSON."""
    import json
    import math
    from dataclasses import asdict

    from engine.scaling import doubling_sizes, saturation_experiment
    from tutor.terminal import use_color

    d_ks = doubling_sizes(min_d, max_d, names=("min_d", "max_d"))
    with _Progress("saturation") as report:
        res = saturation_experiment(d_ks, n_keys=keys, samples=samples, trials=trials, seed=seed,
                                    on_progress=report)
    if as_json:
        print(json.dumps({
            "schema": 1, "experiment": "saturation", "n_keys": res.n_keys, "samples": res.samples,
            "trials": res.trials, "seed": res.seed, "stopped": res.stopped,
            "max_entropy": math.log(res.n_keys), "points": [asdict(p) for p in res.points],
        }, indent=2))
        return
    con = _console()
    for part in saturation_parts(res, ascii=not use_color()):
        _show(con, part)


def scaling_parts(res, *, ascii: bool = False, width: int = 56) -> list:
    """The scaling report as printable parts: a table, sentences and two log-log plots.

    The CLI prints them one by one; the TUI's lab screen shows them as one group.
    """
    from rich.table import Table

    from tutor.plot import Series, line_plot

    fit = res.fit_points()
    exps = res.exponents()
    table = Table(title=f"plain vs tiled attention: one head, d = {res.d}, {res.dtype}, "
                        f"{res.threads} thread(s), best of {res.repeat}, seed {res.seed}",
                  box=_box())
    for col in ("n", "plain time", "×", "tiled time", "×", "plain memory", "tiled memory"):
        table.add_column(col, justify="right")
    prev = None
    for p in res.points:
        table.add_row(str(p.n), _ms(p.plain_seconds), _ratio(p.plain_seconds, prev, "plain_seconds"),
                      _ms(p.tiled_seconds), _ratio(p.tiled_seconds, prev, "tiled_seconds"),
                      _mib(p.plain_bytes), _mib(p.tiled_bytes))
        prev = p
    fitted = ", ".join(str(p.n) for p in fit)
    parts: list = [
        table,
        f"Fitted exponent p in t ≈ c·nᵖ (least squares of log t on log n, n = {fitted}): "
        f"time plain {_exp(exps['plain_seconds'])}, tiled {_exp(exps['tiled_seconds'])}; "
        f"memory plain {_exp(exps['plain_bytes'])}, tiled {_exp(exps['tiled_bytes'])}.",
        "× = time over the previous n: 4 when doubling n doubles both loops. Memory is "
        "computed from the buffers each kernel allocates: plain holds the n×n weights "
        "(∝ n²); tiled one tile per thread (fixed) plus the n×d output and a blocked copy "
        "of K (∝ n), so its exponent reaches 1 only once those outgrow the tiles.",
    ]
    ns = [p.n for p in res.points]
    series_t = [Series("plain", [p.plain_seconds * 1e3 for p in res.points], ns),
                Series("tiled", [p.tiled_seconds * 1e3 for p in res.points], ns)]
    series_m = [Series("plain", [p.plain_bytes / 2**20 for p in res.points], ns),
                Series("tiled", [p.tiled_bytes / 2**20 for p in res.points], ns)]
    for title, series in (("time (ms) vs n, log-log", series_t),
                          ("memory (MiB) vs n, log-log", series_m)):
        parts.append(line_plot(series, width=width, height=12, title=title, x_label="n",
                               logx=True, logy=True, markers=True, ascii=ascii))
    if res.stopped:
        parts.append("(stopped early)")
    return parts


def saturation_parts(res, *, ascii: bool = False, width: int = 56) -> list:
    """The saturation report as printable parts: a table, the legend sentence and a plot."""
    import math

    from rich.table import Table

    from tutor.plot import Series, line_plot

    table = Table(title=f"softmax over {res.n_keys} keys, q and k with unit-variance components; "
                        f"{res.samples} pairs and {res.trials} softmaxes per d_k; seed {res.seed}",
                  box=_box())
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
    parts: list = [
        table,
        f"Var MC: Monte Carlo Var(q·k); exact: Σᵢ Var(qᵢkᵢ) = d_k. H: softmax entropy in "
        f"nats (uniform = ln {res.n_keys} = {math.log(res.n_keys):.3f}); grad: the largest "
        "entry max|∂α/∂s| of the softmax Jacobian diag(α) − ααᵀ (at most 1/4); scaled: "
        "scores q·k/√d_k, raw: q·k. Raw scores saturate the softmax as d_k grows (entropy "
        "and gradient fall towards 0, one weight takes it all); scaled ones stay put.",
        line_plot(series, width=width, height=12, title="entropy (nats) vs d_k, log x",
                  x_label="d_k", logx=True, markers=True, ascii=ascii),
    ]
    if res.stopped:
        parts.append("(stopped early)")
    return parts


def _show(console, part) -> None:
    """Print one report part: a plot (coloured unless plain), a sentence or a Rich table."""
    from tutor.plot import Plot

    if isinstance(part, Plot):
        console.print()
        _plot(console, part)
    else:
        console.print(part)


# --------------------------------------------------------------------------- helpers

def _console():
    from rich.console import Console

    from tutor.terminal import use_color

    return Console(no_color=not use_color(), highlight=False)


def _box():
    from rich import box

    from tutor.terminal import use_color

    return box.SIMPLE_HEAD if use_color() else box.ASCII


class _Progress:
    """A Rich progress bar on stderr (only when stderr is a terminal); yields the callback."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __enter__(self):
        import sys

        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        self.bar = Progress(TextColumn(f"{self.label} [progress.description]{{task.description}}"),
                            BarColumn(), TextColumn("{task.completed}/{task.total}"),
                            TimeElapsedColumn(), console=console, transient=True,
                            disable=not sys.stderr.isatty())
        self.bar.start()
        self.task = self.bar.add_task("", total=1)

        def report(done: int, total: int, message: str) -> None:
            self.bar.update(self.task, completed=done, total=total, description=message)

        return report

    def __exit__(self, *exc) -> None:
        self.bar.stop()


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"


def _mib(b: int) -> str:
    return f"{b / 2**20:.2f} MiB" if b < 100 * 2**20 else f"{b / 2**20:.0f} MiB"


def _ratio(value: float, prev, key: str) -> str:
    return "" if prev is None else f"{value / getattr(prev, key):.1f}"


def _exp(p: float | None) -> str:
    return "—" if p is None else f"{p:.2f}"


def _plot(console, plot) -> None:
    from tutor.lab_view import print_plot
    from tutor.terminal import use_color

    print_plot(console, plot, not use_color())
