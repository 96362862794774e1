"""`attn-tutor trace`: every worked example of the lecture, step by step, with your numbers.

Only typer is imported at module level; the engine, Rich and the renderers load inside the
command, so ``attn-tutor --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

NAME = "trace"
HELP = "Step through a worked example number by number (--plain, --json, --markdown, --set)."

FORMATS = ("plain", "json", "markdown")


def command(
    name: Annotated[Optional[str], typer.Argument(
        help="Trace to show (omit it to list them all).", show_default=False)] = None,
    plain: Annotated[bool, typer.Option(
        "--plain", help="Print every step as plain ASCII text (no colour, no boxes).")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the trace as JSON (schema: docs/trace-json.md).")] = False,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="Print the trace as Markdown to keep in your notes.")] = False,
    step: Annotated[Optional[int], typer.Option(
        "--step", "-s", help="Show only step N (1 = first).", show_default=False)] = None,
    sets: Annotated[Optional[list[str]], typer.Option(
        "--set", metavar="NAME=VALUE",
        help="Override an input: a number, a vector '1,0,-1', a matrix '1,0; 0,1' or JSON. "
             "Repeatable.", show_default=False)] = None,
    file: Annotated[Optional[Path], typer.Option(
        "--file", "-f", help="Read inputs from a TOML file of NAME = value lines.",
        show_default=False)] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Write to this file instead of the terminal (.md → Markdown, "
                               ".json → JSON, otherwise plain text).", show_default=False)] = None,
    inputs: Annotated[bool, typer.Option(
        "--inputs", help="List the inputs this trace accepts, with their defaults.")] = False,
) -> None:
    from tutor.errors import user_errors

    user_errors(run)(name, plain=plain, as_json=as_json, markdown=markdown, step=step, sets=sets,
                     file=file, output=output, inputs=inputs)


def run(name: str | None, *, plain: bool = False, as_json: bool = False, markdown: bool = False,
        step: int | None = None, sets: list[str] | None = None, file: Path | None = None,
        output: Path | None = None, inputs: bool = False) -> None:
    """The command's work, as a plain function (the CLI wraps it in the one-line error handler)."""
    from tutor.errors import UserError

    chosen = [f for f, on in zip(FORMATS, (plain, as_json, markdown)) if on]
    if len(chosen) > 1:
        raise UserError("choose one of --plain, --json and --markdown, not " + " and ".join(
            "--" + c for c in chosen))
    fmt = chosen[0] if chosen else _format_from_suffix(output)

    if name is None:
        if sets or file or step is not None or inputs:
            raise UserError("name a trace to use --set, --file, --step or --inputs "
                            "(run `attn-tutor trace` to list them)")
        _emit(_listing(fmt, output), output)
        return

    from engine.traces import build, get_info, input_specs

    get_info(name)  # unknown name → one line listing the names
    if inputs:
        _emit(_inputs_text(name, input_specs(name), fmt), output)
        return

    from tutor.inputs import gather_inputs

    overrides = gather_inputs(sets, file)
    trace = build(name, overrides)
    if step is not None and not 1 <= step <= len(trace.steps):
        raise UserError(f"--step {step}: trace {name} has {len(trace.steps)} steps; "
                        f"expected a number from 1 to {len(trace.steps)}")

    if fmt == "json":
        _emit(_json(trace, step), output)
    elif fmt == "markdown":
        from tutor.render.markdown import render_markdown

        _emit(render_markdown(trace, step), output)
    elif fmt == "plain" or output is not None or not _on_terminal():
        from tutor.render.plain import render_plain

        _emit(render_plain(trace, step), output)
    elif step is not None:
        _print_rich_step(trace, step)
    else:
        show_interactive(trace, overrides)


def show_interactive(trace, overrides: dict) -> None:
    """On a terminal: the TUI's trace screen, on these very inputs."""
    from tutor.app import StartAt, run_app

    run_app(StartAt("trace", trace.name, trace_inputs=overrides))


# --------------------------------------------------------------------------- helpers


def _on_terminal() -> bool:
    from tutor.terminal import is_interactive

    return is_interactive()


def _console():
    from rich.console import Console

    from tutor.terminal import use_color

    return Console(no_color=not use_color(), highlight=False)


def _print_rich_step(trace, step: int) -> None:
    from tutor.render.rich_view import step_panel

    _console().print(step_panel(trace, step - 1))


def _format_from_suffix(output: Path | None) -> str | None:
    if output is None:
        return None
    return {".md": "markdown", ".markdown": "markdown", ".json": "json"}.get(
        output.suffix.lower(), "plain")


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    from tutor.errors import UserError

    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--output {output}: cannot write it ({exc.strerror})") from None
    typer.echo(f"wrote {output}", err=True)


def _json(trace, step: int | None) -> str:
    import json

    data = trace.to_dict()
    if step is not None:
        data["steps"] = [data["steps"][step - 1]]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _listing(fmt: str | None, output: Path | None) -> str:
    from engine.traces import list_traces

    traces = list_traces()
    if fmt == "json":
        import json

        return json.dumps([{"name": t.name, "section": t.section, "title": t.title,
                            "description": t.description} for t in traces],
                          indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        rows = ["| trace | § | what it shows |", "| --- | --- | --- |"]
        rows += [f"| `{t.name}` | {t.section} | {t.title}: {t.description} |" for t in traces]
        return "\n".join(rows) + "\n"
    if fmt is None and output is None and _on_terminal():
        _print_rich_listing(traces)
        return ""
    from tutor.render.text import asciify

    width = max(len(t.name) for t in traces)
    lines = ["Worked examples (attn-tutor trace NAME; --plain, --json, --markdown, --set):", ""]
    lines += [f"  sec {t.section:<3}{t.name:<{width + 2}}{asciify(t.title)}: {asciify(t.description)}"
              for t in traces]
    return "\n".join(lines) + "\n"


def _print_rich_listing(traces) -> None:
    from rich.table import Table

    table = Table(title="Worked examples · attn-tutor trace NAME", title_justify="left")
    table.add_column("§", justify="right", style="dim")
    table.add_column("trace", style="bold cyan", no_wrap=True)
    table.add_column("what it shows")
    for t in traces:
        table.add_row(str(t.section), t.name, f"[bold]{t.title}[/]: {t.description}")
    _console().print(table)


def _inputs_text(name: str, specs, fmt: str | None) -> str:
    from engine.trace import to_jsonable

    if fmt == "json":
        import json

        return json.dumps([{"name": s.name, "kind": s.kind, "expected": s.expected(),
                            "default": to_jsonable(s.coerce(s.default)),
                            "description": s.description} for s in specs],
                          indent=2, ensure_ascii=False) + "\n"
    from tutor.inputs import format_value
    from tutor.render.text import asciify

    lines = [f"Inputs of {name} (change one with --set NAME=VALUE; defaults are shown as "
             "VALUE, ready to edit and paste):", ""]
    for s in specs:
        # the words a student typed stay as they are; everything else is the tutor's own text
        default = ("worked out from the other inputs" if s.default is None
                   else format_value(s.coerce(s.default), digits=6))
        lines.append(f"  {s.name}: {asciify(s.expected())}; {asciify(s.description)}")
        lines.append(f"      default {default}")
    return "\n".join(lines) + "\n"
