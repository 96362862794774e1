"""What the tutor has, as lists: every trace (``attn-tutor trace``), one trace's inputs
(``trace NAME --inputs``) and a trace as JSON — in plain text, JSON, Markdown or Rich."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.trace import to_jsonable
from tutor.inputs import format_value
from tutor.render.safe import assemble, clean, json_dumps, text
from tutor.render.text import asciify


def trace_json(trace: Any, step: int | None = None) -> str:
    """The trace (or only step ``step``, 1-based) in the schema of ``tutor/schemas/trace-json.md``."""
    data = trace.to_dict()
    if step is not None:
        data["steps"] = [data["steps"][step - 1]]
    return json_dumps(data, indent=2) + "\n"


def traces_text(traces: Sequence[Any], fmt: str | None) -> str:
    """The list of traces as ``json``, ``markdown`` or (anything else) plain ASCII text."""
    if fmt == "json":
        return json_dumps([{"name": t.name, "section": t.section, "title": t.title,
                            "description": t.description} for t in traces], indent=2) + "\n"
    if fmt == "markdown":
        rows = ["| trace | § | what it shows |", "| --- | --- | --- |"]
        rows += [f"| `{t.name}` | {t.section} | {t.title}: {t.description} |" for t in traces]
        return clean("\n".join(rows) + "\n")
    width = max(len(t.name) for t in traces)
    lines = ["Worked examples (attn-tutor trace NAME; --plain, --json, --markdown, --set):", ""]
    lines += [f"  sec {t.section:<3}{t.name:<{width + 2}}{asciify(t.title)}: {asciify(t.description)}"
              for t in traces]
    return clean("\n".join(lines) + "\n")


def traces_table(traces: Sequence[Any]) -> Any:
    """The list of traces as a Rich table (a terminal)."""
    from rich.table import Table  # deferred: loads rich (start-up time)

    table = Table(title="Worked examples · attn-tutor trace NAME", title_justify="left")
    table.add_column("§", justify="right", style="dim")
    table.add_column("trace", style="bold cyan", no_wrap=True)
    table.add_column("what it shows")
    for t in traces:
        table.add_row(str(t.section), text(t.name), assemble((t.title, "bold"), ": ", t.description))
    return table


def inputs_text(name: str, specs: Sequence[Any], fmt: str | None) -> str:
    """A trace's inputs with their defaults, as JSON or as text ready to edit into ``--set``."""
    if fmt == "json":
        return json_dumps([{"name": s.name, "kind": s.kind, "expected": s.expected(),
                            "default": to_jsonable(s.coerce(s.default)),
                            "description": s.description} for s in specs], indent=2) + "\n"
    lines = [f"Inputs of {name} (change one with --set NAME=VALUE; defaults are shown as "
             "VALUE, ready to edit and paste):", ""]
    for s in specs:
        # the words a student typed stay as they are; everything else is the tutor's own text
        default = ("worked out from the other inputs" if s.default is None
                   else format_value(s.coerce(s.default), digits=6))
        lines.append(f"  {s.name}: {asciify(s.expected())}; {asciify(s.description)}")
        lines.append(f"      default {default}")
    return clean("\n".join(lines) + "\n")
