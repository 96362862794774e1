"""Rich renderables for a trace: the overview page, one page per step, and the summary.

Every string of the trace is data (a student's tokens end up in values, substitutions and
notes), so each reaches Rich as :func:`tutor.render.safe.text`, never as markup.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from engine.trace import Trace
from tutor.render.safe import assemble, text
from tutor.render.text import source_label, value_lines


def _values_table(values: dict, name_style: str = "green") -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style=name_style, justify="right", no_wrap=True)
    table.add_column(overflow="fold")  # a long vector wraps at its commas: never cut off
    for name, value in values.items():
        table.add_row(text(f"{name} ="), text("\n".join(value_lines(value))))
    return table


def overview(trace: Trace) -> RenderableType:
    """Title, where the numbers come from, the inputs and the list of steps."""
    parts: list[RenderableType] = [  # the title in the body: a panel title is cut when narrow
        text(trace.title, "bold"),
        Text(f"Numbers from: {source_label(trace.source)}", style="dim"),
    ]
    if trace.summary:
        parts += [Text(""), text(trace.summary)]
    parts += [Text(""), Text("Inputs", style="bold"), _values_table(trace.inputs)]
    steps = Table.grid(padding=(0, 1))
    steps.add_column(style="dim", justify="right")
    steps.add_column()
    for i, step in enumerate(trace.steps, 1):
        steps.add_row(f"{i}.", text(step.title))
    parts += [Text(""), Text("Steps", style="bold"), steps]
    if trace.errata:
        count = len(trace.errata)
        parts += [Text(""), Text(f"{count} {'erratum' if count == 1 else 'errata'} at the end: "
                                 "where the notes print something else", style="yellow")]
    return Panel(Group(*parts), title=text(trace.name, "bold"),
                 subtitle=f"lecture §{trace.section}", border_style="blue")


def step_panel(trace: Trace, index: int) -> RenderableType:
    """Step ``index`` (0-based): formula, numbers substituted, values and the note."""
    step = trace.steps[index]
    parts: list[RenderableType] = [
        text(step.formula, "bold cyan"),
        Text(""),
        text(step.substitution),
    ]
    if step.values:
        parts += [Text(""), _values_table(step.values)]
    if step.note:
        parts += [Text(""), text(step.note, "italic")]
    return Panel(
        Group(*parts),
        title=assemble(f"Step {index + 1}/{len(trace.steps)} · ", (step.title, "bold")),
        subtitle=assemble(trace.name, f" · §{trace.section}"),
        border_style="cyan",
    )


def summary(trace: Trace) -> RenderableType:
    """Final results, the step-by-step vs fused check, and any errata."""
    bad = trace.disagreements()
    check = (Text("✓ the step-by-step values match the one-call engine functions", style="green")
             if not bad else text("✗ " + "; ".join(bad), "bold red"))
    parts: list[RenderableType] = [_values_table(trace.result, "bold green")]
    if trace.fused:
        parts += [Text(""), check]
    panels: list[RenderableType] = [Panel(Group(*parts), title="Result", border_style="green")]
    for k, e in enumerate(trace.errata, 1):
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        grid.add_row("where", text(e.where))  # in the body: a long place would be cut in a title
        grid.add_row("printed", text(e.printed))
        grid.add_row("computed", text(e.computed))
        grid.add_row("why", text(e.why, "italic"))
        panels.append(Panel(grid, title=f"Erratum {k} of {len(trace.errata)}", subtitle=text(e.kind),
                            border_style="yellow"))
    return Group(*panels)


def pages(trace: Trace) -> list[RenderableType]:
    """Every page of a trace in order: overview, one per step, the result (the TUI pages these)."""
    return [overview(trace)] + [step_panel(trace, i) for i in range(len(trace.steps))] + [summary(trace)]


def whole(trace: Trace) -> RenderableType:
    """All pages one after another (non-interactive Rich output)."""
    return Group(*pages(trace))
