"""Running an experiment in a terminal (``attn-tutor lab NAME``): a note and progress bars on
stderr, Ctrl-C to stop early, then the report or the JSON on stdout.

Exit status 130 when Ctrl-C ended the run (the report covers what was done).
"""

from __future__ import annotations

import os
from typing import Any

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.lab.experiments import Experiment
from tutor.lab.jsonout import dumps
from tutor.lab.progress import CtrlC, TerminalProgress, progress_enabled, warm_up_kernels
from tutor.lab.report import Style, print_parts
from tutor.render.safe import clean
from tutor.warmup import load_in_background

EXIT_INTERRUPTED = 130


def style_for(ascii_flag: bool) -> Style:
    """``--ascii``, or a terminal that says it cannot do better (``TERM=dumb``); colour only on
    a terminal without ``NO_COLOR``."""
    ascii_only = ascii_flag or os.environ.get("TERM", "") == "dumb"
    return Style(ascii=ascii_only, color=terminal.use_color() and not ascii_only)


def console(style: Style) -> Any:
    """The stdout console for a report drawn in ``style``."""
    from rich.console import Console  # deferred: loads rich (start-up time)

    return Console(highlight=False, no_color=not style.color,
                   color_system="auto" if style.color else None, emoji=False)


def run_in_terminal(exp: Experiment, settings: Any, *, json_out: bool, style: Style) -> Any:
    """Run ``exp`` with ``settings`` and print what it found; returns the result.

    Raises:
        typer.Exit: 130 when Ctrl-C stopped the run (after the report is printed).
    """
    import typer  # deferred: loads typer (start-up time)

    enabled = progress_enabled()
    runs, total = exp.bars(settings)
    note = exp.describe(settings)
    with CtrlC() as stop:  # a Ctrl-C while the kernels load stops the run at its first step
        if exp.kernels:
            warm_up_kernels(enabled, areas=exp.kernels)
        if exp.later:                   # the scoring's kernels, on the side while it trains
            load_in_background(exp.later)
        if note:  # once the kernels are in: from here on Ctrl-C stops after a step
            typer.echo(clean(f"{note} (Ctrl-C stops early and reports)"), err=True)
        with TerminalProgress(runs, total, enabled and total > 0) as bar:
            result = exp.run(settings, on_progress=bar.callback, should_stop=stop)
    for line in exp.save(result, settings):
        typer.echo(clean(line), err=True)
    if json_out:
        typer.echo(dumps(exp.to_json(result, settings)))
    else:
        print_parts(console(style), exp.report(result, settings, style), style)
    if exp.stopped(result):
        typer.echo("attn-tutor: interrupted; the results above cover the steps completed", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    return result
