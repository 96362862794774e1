"""The lab's words, tables and plots, shared by the CLI and the TUI.

Each experiment's ``report(result, style)`` returns a list of *parts*; this module holds the
pieces they are made of and the two ways of showing them:

- a part is a ``str`` (a sentence; data, never markup: it may hold a loaded record's fields,
  so it is shown through :mod:`tutor.render.safe`), a :class:`tutor.plot.Plot`, or a Rich
  renderable (a table, a heatmap);
- :func:`print_parts` prints parts on a console (the CLI: plots as plain text without colour);
- :func:`renderable` groups them into one Rich renderable (the TUI's results panel).

So a sentence the CLI prints is the sentence the TUI shows.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tutor.plot import Plot, Series, line_plot
from tutor.render.numbers import percent
from tutor.render.safe import clean, text

Part = Any
"""A ``str`` sentence, a :class:`~tutor.plot.Plot` or a Rich renderable."""


@dataclass(frozen=True)
class Style:
    """How a report is drawn: 7-bit ASCII (tables, plots, labels), colour, plot width."""

    ascii: bool = False
    color: bool = True
    width: int = 56


# ---------------------------------------------------------------------------- numbers and names


def pct(x: float | None) -> str:
    """``" 97.5%"`` (one decimal, width 6, for table columns), or ``—`` for a missing value."""
    text = percent(x, 1)
    return text if text == "—" else text.rjust(6)


def model_desc(cfg: Any) -> str:
    """``GRU, hidden 64, bidirectional encoder``."""
    enc = "bidirectional " if cfg.bidirectional else ""
    return f"{cfg.cell.upper()}, hidden {cfg.hidden_dim}, {enc}encoder"


def box(style: Style) -> Any:
    """Table borders: ASCII for ``--ascii``/``TERM=dumb``/no colour, light lines otherwise."""
    from rich import box as boxes  # deferred: loads rich (start-up time)

    return boxes.ASCII if style.ascii or not style.color else boxes.SIMPLE_HEAD


# ---------------------------------------------------------------------------- tables and plots


def accuracy_table(buckets: Sequence[Any], runs: dict[str, Sequence[Any]], *, ascii: bool = False,
                   title: str = "", metrics: Sequence[str] = ("token", "sequence")) -> Any:
    """A Rich table: one row per length bucket, the ``metrics`` (token and/or sequence
    accuracy) of every run."""
    from rich import box as boxes  # deferred: loads rich (start-up time)
    from rich.table import Table  # deferred: loads rich (start-up time)

    table = Table(title=title or None, box=boxes.ASCII if ascii else boxes.SIMPLE_HEAVY,
                  title_justify="left")
    table.add_column("length", justify="right")
    table.add_column("n", justify="right")
    for name in runs:
        for metric in metrics:
            table.add_column(f"{name}\n{metric}", justify="right")
    for k, _ in enumerate(buckets):
        first = next(iter(runs.values()))[k]
        row = [first.label.replace("–", "-") if ascii else first.label, str(first.n)]
        for accs in runs.values():
            row += [pct(getattr(accs[k], f"{metric}_accuracy")) for metric in metrics]
        table.add_row(*row)
    return table


def evaluated(runs: dict[str, Sequence[Any]]) -> int:
    """How many length buckets every run was scored on (a stop ends the evaluation early)."""
    return min((len(accs) for accs in runs.values()), default=0)


def evaluation_note(done: int, planned: int) -> str:
    """The sentence for an evaluation a stop cut short (empty when it was complete)."""
    if done >= planned:
        return ""
    if done == 0:
        return "Not evaluated on held-out sequences: the run was stopped first."
    return (f"Evaluation stopped after {done} of {planned} length buckets: the table shows "
            "those.")


def accuracy_plot(runs: dict[str, Sequence[Any]], *, ascii: bool = False, width: int = 56,
                  height: int = 10, metric: str = "token") -> Plot:
    """Token (or sequence) accuracy (%) against sequence length: one line per run, a marker
    per bucket."""
    series = [Series(name, [100 * getattr(a, f"{metric}_accuracy") for a in accs],
                     [(a.lo + a.hi) / 2 for a in accs]) for name, accs in runs.items()]
    return line_plot(series, width=width, height=height, y_range=(0, 100), ascii=ascii,
                     markers=True, title=f"{metric} accuracy (%) by source length",
                     x_label="source length (digits, bucket centre)")


def loss_plot(curves: Sequence[Any], *, ascii: bool = False, width: int = 56, height: int = 10,
              title: str = "training loss per target token (smoothed)") -> Plot:
    """Smoothed loss curves against step, side by side on one pair of axes."""
    series = [Series(c.label, c.smoothed(), list(range(1, len(c.losses) + 1))) for c in curves]
    return line_plot(series, width=width, height=height, title=title, x_label="step", ascii=ascii)


def live_loss_plot(losses: dict[str, list[tuple[int, float]]], width: int) -> Plot:
    """The loss per token as it arrives in progress events, one line per run (the TUI).

    Each run is drawn from at most two points per character column (Braille's horizontal
    resolution): longer runs are averaged in consecutive groups, so drawing costs the same at
    step 100 and at step 100,000.
    """
    most = 2 * max(8, int(width))
    series = []
    for run, pts in losses.items():
        pts = thinned(pts, most)
        series.append(Series(run, [loss for _, loss in pts], [step for step, _ in pts]))
    return line_plot(series, width=width, height=8, title="training loss per target token (live)",
                     x_label="step")


def thinned(points: Sequence[tuple[int, float]], most: int) -> list[tuple[int, float]]:
    """At most ``most`` points: means of consecutive groups (x = the group's last step)."""
    if len(points) <= most:
        return list(points)
    k = -(-len(points) // most)
    out = []
    for i in range(0, len(points), k):
        group = points[i:i + k]
        out.append((group[-1][0], sum(loss for _, loss in group) / len(group)))
    return out


def table_text(table: Any, width: int = 100) -> str:
    """A Rich table as plain text (no colour)."""
    from rich.console import Console  # deferred: loads rich (start-up time)

    out = io.StringIO()
    console = Console(width=width, no_color=True, color_system=None, file=out)
    console.print(table)
    return out.getvalue()


# ---------------------------------------------------------------------------- showing parts


def print_parts(console: Any, parts: Sequence[Part], style: Style) -> None:
    """Print a report on ``console``: sentences as data (never markup), plots as plain text
    when there is no colour, everything else as Rich draws it. In the ASCII style (``--ascii``,
    or piped) the whole report is spelled in ASCII (``√d_k`` → ``sqrt(d_k)``, ``×`` → ``x``),
    so every lab command writes one character set."""
    if style.ascii:
        from tutor.render.text import asciify  # deferred: loads numpy (start-up time)

        with console.capture() as captured:
            _print_parts(console, parts, style)
        console.file.write(asciify(captured.get()))
        console.file.flush()
        return
    _print_parts(console, parts, style)


def _print_parts(console: Any, parts: Sequence[Part], style: Style) -> None:
    for part in parts:
        if isinstance(part, str):
            console.print(text(part))
        elif isinstance(part, Plot):
            if console.no_color or style.ascii:
                console.print(clean(part.text()), markup=False, highlight=False)
            else:
                console.print(part.rich())
        else:
            console.print(part)


def renderable(parts: Sequence[Part]) -> Any:
    """A report as one Rich renderable (the TUI's results panel)."""
    from rich.console import Group  # deferred: loads rich (start-up time)

    return Group(*(text(p) if isinstance(p, str) else p.rich() if isinstance(p, Plot) else p
                   for p in parts))
