"""Plain-text trace output: no colour, no box drawing, pure ASCII math (``--plain``).

Whatever a trace holds (a student's tokens reach its values, numbers and notes), the text
leaves here through :func:`tutor.render.safe.clean`: no terminal control gets through.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

from engine.trace import Erratum, Step, Trace
from tutor.render.safe import clean
from tutor.render.text import asciify, source_label, value_lines

WIDTH = 12  # label column: "  Formula:  "


PROSE = 88  # wrap notes and explanations to this width; formulas and numbers never wrap


def _field(label: str, text: str, ascii_only: bool, wrap: bool = False, width: int = PROSE) -> list[str]:
    body = asciify(text) if ascii_only else text
    rows = body.splitlines() or [""]
    if wrap:
        rows = [w for row in rows for w in (textwrap.wrap(row, max(20, width - WIDTH)) or [""])]
    head = f"  {label + ':':<{WIDTH - 2}}"
    return [head + rows[0]] + [" " * WIDTH + row for row in rows[1:]]


def _values(values: dict, ascii_only: bool, label: str = "Values") -> list[str]:
    out: list[str] = []
    first = True
    for name, value in values.items():
        shown = value_lines(value)
        key = asciify(name) if ascii_only else name
        prefix = f"{key} = "
        pad = " " * len(prefix)
        for k, line in enumerate(shown):
            text = (prefix if k == 0 else pad) + (asciify(line) if ascii_only else line)
            head = f"  {label + ':':<{WIDTH - 2}}" if first else " " * WIDTH
            out.append(head + text)
            first = False
    return out


def step_lines(trace: Trace, index: int, ascii_only: bool = True) -> list[str]:
    """One step (0-based ``index``) as text lines."""
    step: Step = trace.steps[index]
    title = asciify(step.title) if ascii_only else step.title
    out = [f"Step {index + 1} of {len(trace.steps)}: {title}"]
    out += _field("Formula", step.formula, ascii_only)
    out += _field("Numbers", step.substitution, ascii_only)
    if step.values:
        out += _values(step.values, ascii_only)
    if step.note:
        out += _field("Note", step.note, ascii_only, wrap=True)
    return out


def header_lines(trace: Trace, ascii_only: bool = True) -> list[str]:
    a = asciify if ascii_only else (lambda s: s)
    out = [a(f"{trace.name}: {trace.title} (lecture section {trace.section})"),
           a(f"Numbers from: {source_label(trace.source)}")]
    if trace.summary:
        out += textwrap.wrap(a(trace.summary), PROSE)
    out += ["", "Inputs"] + _named(trace.inputs, ascii_only)
    return out


def _named(values: dict, ascii_only: bool) -> list[str]:
    a = asciify if ascii_only else (lambda s: s)
    out = []
    for name, value in values.items():
        shown = value_lines(value)
        prefix = f"  {a(name)} = "
        out.append(prefix + a(shown[0]))
        out += [" " * len(prefix) + a(line) for line in shown[1:]]
    return out


def result_lines(trace: Trace, ascii_only: bool = True) -> list[str]:
    a = asciify if ascii_only else (lambda s: s)
    out = ["Result"] + _named(trace.result, ascii_only)
    bad = trace.disagreements()
    if trace.fused:
        names = ", ".join(a(k) for k in trace.fused)
        out.append(("Check: the step-by-step values agree with the one-call engine functions ("
                    + names + ")") if not bad else "CHECK FAILED: " + "; ".join(a(b) for b in bad))
    return out


def errata_lines(trace: Trace, ascii_only: bool = True, width: int = PROSE) -> list[str]:
    """The trace's errata as lines wrapped to ``width`` (print them as they are: wrapping
    them again, as a console or an SVG export would, breaks every line in two)."""
    return errata_block(trace.errata, ascii_only, width)


def errata_block(errata: Sequence[Erratum], ascii_only: bool = True, width: int = PROSE) -> list[str]:
    """:func:`errata_lines` for a list of errata (the heatmap command holds only those)."""
    if not errata:
        return []
    a = asciify if ascii_only else (lambda s: s)
    out = [f"Errata: where the notes and the engine disagree ({len(errata)})"]
    for k, e in enumerate(errata, 1):
        out += textwrap.wrap(f"{k}. {a(e.where)} [{e.kind}]", max(20, width), initial_indent="  ",
                             subsequent_indent="     ")
        for label, text in (("Printed", e.printed), ("Computed", e.computed), ("Why", e.why)):
            out += ["  " + line for line in _field(label, text, ascii_only, wrap=True, width=width - 2)]
    return [clean(line, lines=False) for line in out]


def _join(blocks: Iterable[list[str]]) -> str:
    return clean("\n\n".join("\n".join(b) for b in blocks if b) + "\n")


def render_plain(trace: Trace, step: int | None = None, ascii_only: bool = True) -> str:
    """The whole trace, or only step ``step`` (1-based), as plain text."""
    if step is not None:
        return _join([step_lines(trace, step - 1, ascii_only)])
    blocks = [header_lines(trace, ascii_only)]
    blocks += [step_lines(trace, i, ascii_only) for i in range(len(trace.steps))]
    blocks += [result_lines(trace, ascii_only), errata_lines(trace, ascii_only)]
    return _join(blocks)
