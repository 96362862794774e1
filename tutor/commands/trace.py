"""`attn-tutor trace`: every worked example of the lecture, step by step, with your numbers.

Only typer is imported at module level; the engine, Rich and the renderers load inside the
command, so ``attn-tutor --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.errors import UserError, user_errors
from tutor.limits import MAX_SEED
from tutor.names import resolve

NAME = "trace"
HELP = ("Step through a worked example number by number (--plain, --json, --markdown, --set), "
        "check your own numbers (--check), or do its steps yourself (--practice).")

FORMATS = ("plain", "json", "markdown")


def command(
    name: Annotated[str | None, typer.Argument(
        help="Trace to show (omit it to list them all).", show_default=False)] = None,
    plain: Annotated[bool, typer.Option(
        "--plain", help="Print every step as plain ASCII text (no colour, no boxes).")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the trace as JSON (schema: attn-tutor trace --schema).")] = False,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="Print the trace as Markdown to keep in your notes.")] = False,
    step: Annotated[int | None, typer.Option(
        "--step", "-s", help="Show only step N (1 = first).", show_default=False)] = None,
    sets: Annotated[list[str] | None, typer.Option(
        "--set", metavar="NAME=VALUE",
        help="Override an input: a number, a vector '1,0,-1', a matrix '1,0; 0,1' or JSON. "
             "Repeatable.", show_default=False)] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", "-f", help="Read inputs from a TOML file of NAME = value lines.",
        show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write to this file instead of the terminal (.md → Markdown, "
                               ".json → JSON, otherwise plain text).", show_default=False)] = None,
    inputs: Annotated[bool, typer.Option(
        "--inputs", help="List the inputs this trace accepts, with their defaults.")] = False,
    schema: Annotated[bool, typer.Option(
        "--schema", help="Print the schema of --json (Markdown) and exit.")] = False,
    # -- practice: the student does the steps (tutor/practice) --------------------------
    practice: Annotated[bool, typer.Option(
        "--practice", help="Do the steps yourself: some values are blank, you type them and "
                           "each is checked and diagnosed. With --plain: one answer per line "
                           "from stdin (:hint, :skip, :quit).")] = False,
    level: Annotated[int | None, typer.Option(
        "--level", metavar="N", help="With --practice: the fading level (0 shows every value; "
                                     "each level blanks one more step from the end); it is "
                                     "stored for next time.", show_default=False)] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", metavar="S", help="With --practice: fresh numbers drawn with this seed (the "
                                    "first practice of a trace uses the notes' numbers).",
        show_default=False)] = None,
    # --check: the student's own numbers, marked and diagnosed (tutor/render/check.py)
    checks: Annotated[list[str] | None, typer.Option(
        "--check", metavar="VALUE=NUMBERS",
        help="Check your own number(s) for a value of the trace, e.g. weights=0.47,0.26,0.26: "
             "correct, or which catalogued mistake gives them. Repeatable; with --json, as JSON.",
        show_default=False)] = None,
) -> None:
    if schema:
        # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
        from tutor.render.documents import json_schema

        typer.echo(json_schema(NAME), nl=False)
        return
    if practice or level is not None or seed is not None:
        user_errors(run_practice)(name, practice=practice, level=level, seed=seed, plain=plain,
                                  others={"--json": as_json, "--markdown": markdown,
                                          "--step": step is not None, "--set": bool(sets),
                                          "--file": file is not None, "--output": output is not None,
                                          "--inputs": inputs, "--check": bool(checks)})
        return

    if checks:
        user_errors(run_checks)(name, checks, plain=plain, as_json=as_json, markdown=markdown,
                                sets=sets, file=file, output=output)
        return
    user_errors(run)(name, plain=plain, as_json=as_json, markdown=markdown, step=step, sets=sets,
                     file=file, output=output, inputs=inputs)


def run(name: str | None, *, plain: bool = False, as_json: bool = False, markdown: bool = False,
        step: int | None = None, sets: list[str] | None = None, file: Path | None = None,
        output: Path | None = None, inputs: bool = False) -> None:
    """The command's work, as a plain function (the CLI wraps it in the one-line error handler)."""
    chosen = [f for f, on in zip(FORMATS, (plain, as_json, markdown)) if on]
    if len(chosen) > 1:
        raise UserError("choose one of --plain, --json and --markdown, not " + " and ".join(
            "--" + c for c in chosen))
    fmt = chosen[0] if chosen else _format_from_suffix(output)

    if name is None:
        if sets or file or step is not None or inputs:
            raise UserError("name a trace to use --set, --file, --step or --inputs "
                            "(run `attn-tutor trace` to list them)")
        from engine.traces import list_traces  # deferred: loads numpy (start-up time)

        traces = list_traces()
        if fmt is None and output is None and _on_terminal():
            from tutor.render.catalog import traces_table  # deferred: loads numpy, rich (start-up time)

            _console().print(traces_table(traces))
            return
        from tutor.render.catalog import traces_text  # deferred: loads numpy, rich (start-up time)

        _emit(traces_text(traces, fmt), output)
        return

    from engine.traces import build, input_specs, list_traces  # deferred: loads numpy (start-up time)

    name = resolve(name, [t.name for t in list_traces()], "trace",
                   "Run `attn-tutor trace` to list them.")
    if inputs:
        from tutor.render.catalog import inputs_text  # deferred: loads numpy, rich (start-up time)

        _emit(inputs_text(name, input_specs(name), fmt), output)
        return

    from tutor.inputs import gather_inputs  # deferred: loads rich (start-up time)

    overrides = gather_inputs(sets, file)
    on_terminal = _on_terminal()
    trace = build(name, overrides)
    if step is not None and not 1 <= step <= len(trace.steps):
        raise UserError(f"--step {step}: trace {name} has {len(trace.steps)} steps; "
                        f"expected a number from 1 to {len(trace.steps)}")

    if fmt == "json":
        from tutor.render.catalog import trace_json  # deferred: loads numpy, rich (start-up time)

        _emit(trace_json(trace, step), output)
    elif fmt == "markdown":
        from tutor.render.markdown import render_markdown  # deferred: loads numpy, rich (start-up time)

        _emit(render_markdown(trace, step), output)
    elif fmt == "plain" or output is not None or not on_terminal:
        from tutor.render.plain import render_plain  # deferred: loads numpy, rich (start-up time)

        _emit(render_plain(trace, step), output)
    elif step is not None:
        _print_rich_step(trace, step)
    else:
        show_interactive(trace, overrides)


def run_practice(name: str | None, *, practice: bool, level: int | None, seed: int | None,
                 plain: bool, others: dict[str, bool]) -> None:
    """``--practice``: the TUI's trace screen in practice on a terminal, else the line front end."""
    if not practice:
        raise UserError("--level and --seed go with --practice (attn-tutor trace NAME --practice)")
    clash = [flag for flag, on in others.items() if on]
    if clash:
        raise UserError(f"--practice cannot be combined with {', '.join(clash)}")
    if name is None:
        raise UserError("name a trace to practise (run `attn-tutor trace` to list them)")
    from engine.traces import list_traces  # deferred: loads numpy (start-up time)

    name = resolve(name, [t.name for t in list_traces()], "trace",
                   "Run `attn-tutor trace` to list them.")
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed {seed}: expected a whole number from 0 to {MAX_SEED}")
    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.practice.content import load_plan

    # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.practice.levels import check_level

    if level is not None:
        try:
            check_level(level, load_plan(name).top, name)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if not plain and _on_terminal():
        from tutor.app import StartAt, run_app  # deferred: loads textual (start-up time)
        from tutor.practice.tasks import PracticeStart  # deferred: loads numpy, rich (start-up time)

        run_app(StartAt("trace", name, practice=PracticeStart(level, seed)))
        return

    from tutor.practice.plain import run_lines  # deferred: loads numpy, rich (start-up time)
    from tutor.practice.session import PracticeSession  # deferred: loads numpy, rich (start-up time)
    from tutor.quiz.plain import LineReader, make_out  # deferred: loads rich (start-up time)
    from tutor.store import StoreError, open_store  # deferred: loads rich (start-up time)

    store = open_store()
    for warning in store.warnings:
        print(f"attn-tutor: warning: {warning}", file=sys.stderr)
    try:
        try:
            session = PracticeSession.start(name, store, level=level, seed=seed)
        except StoreError as exc:
            raise UserError(f"--level {level}: {exc}") from None
        saved_to = str(store.path) if store.persistent else None
        _, interrupted = run_lines(session, out=make_out(styled=False), reader=LineReader(),
                                   saved_to=saved_to)
    finally:
        store.close()
    if interrupted:
        raise typer.Exit(130)


def run_checks(name: str | None, checks: list[str], *, plain: bool = False, as_json: bool = False,
               markdown: bool = False, sets: list[str] | None = None, file: Path | None = None,
               output: Path | None = None) -> None:
    """``--check VALUE=NUMBERS``: mark each value and name the mistake behind a wrong one.

    A wrong number is a normal result (exit 0); a check that cannot be read (no ``=``, not a
    number, an unknown value, the wrong count) is a :class:`UserError` (exit 2).
    """
    if name is None:
        raise UserError("name a trace to check numbers against, e.g. "
                        "attn-tutor trace qkv --check weights=0.47,0.26,0.26")
    if markdown:
        raise UserError("--check prints text or --json, not --markdown")
    if plain and as_json:
        raise UserError("choose one of --plain and --json, not both")
    from engine.traces import list_traces  # deferred: loads numpy (start-up time)
    from tutor.inputs import gather_inputs  # deferred: loads rich (start-up time)
    from tutor.typed import parse_check  # deferred: loads rich (start-up time)

    name = resolve(name, [t.name for t in list_traces()], "trace",
                   "Run `attn-tutor trace` to list them.")
    overrides = gather_inputs(sets, file)
    from engine.mistakes import diagnose  # deferred: loads numba (start-up time)

    # deferred: loads numpy, rich (start-up time)
    from tutor.render.check import checks_json, checks_renderable, checks_text

    results = []
    for spec in checks:
        try:
            value, numbers, decimals = parse_check(spec)
            results.append(diagnose(name, overrides, value, numbers, decimals=decimals))
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if as_json or _format_from_suffix(output) == "json":
        _emit(checks_json(results, name, overrides), output)
    elif plain or output is not None or not _on_terminal():
        _emit(checks_text(results, name, overrides), output)
    else:
        _console().print(checks_renderable(results, name, overrides))


def show_interactive(trace, overrides: dict) -> None:
    """On a terminal: the TUI's trace screen, on these very inputs."""
    from tutor.app import StartAt, run_app  # deferred: loads textual (start-up time)

    run_app(StartAt("trace", trace.name, trace_inputs=overrides))


# --------------------------------------------------------------------------- helpers


def _on_terminal() -> bool:
    return terminal.is_interactive()


def _console():
    from rich.console import Console  # deferred: loads rich (start-up time)

    return Console(no_color=not terminal.use_color(), highlight=False)


def _print_rich_step(trace, step: int) -> None:
    from tutor.render.rich_view import step_panel  # deferred: loads numpy, rich (start-up time)

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
    from tutor import atomic  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.render.safe import shown_path  # deferred: loads rich (start-up time)

    try:
        atomic.write_text(output, text)
    except OSError as exc:
        raise UserError(f"--output {shown_path(output)}: cannot write it ({exc.strerror})") from None
    typer.echo(f"wrote {shown_path(output)}", err=True)
