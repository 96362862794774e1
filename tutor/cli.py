"""The ``attn-tutor`` command line (Typer).

Commands are thin: they parse arguments and hand over to plain functions in ``tutor``.
Nothing heavy is imported at module level, so ``attn-tutor --help`` does not load numba or
textual, and a command's module is imported, and its click command built, only when the
command line names it (:data:`COMMANDS`): ``attn-tutor trace qkv --json`` loads the trace
command alone.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup
from typer.exceptions import Abort, TyperException

from tutor import __version__
from tutor.errors import EXIT_INTERNAL, one_line, report_internal_error, usage_message
from tutor.runmode import choose_kernels
from tutor.terminal import degrade_to_ascii, why_not_interactive

HELP = """attn-tutor: learn attention mechanisms in the terminal.

Lessons for the twelve sections of the lecture (and one on the Transformer), step-by-step traces of every \
worked example, exam quizzes with spaced repetition, attention heatmaps, and a lab that trains a tiny \
seq2seq.

Run it with no command on a terminal to open the full-screen tutor.
"""

def _styled_help() -> bool:
    """Rich panels for --help on a colour terminal; click's plain text when piped or NO_COLOR."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


COMMANDS: dict[str, str] = {
    name: "tutor.commands." + module for name, module in (
        ("lesson", "lesson"), ("trace", "trace"), ("quiz", "quiz"), ("paper", "paper"),
        ("heatmap", "heatmap"), ("stats", "stats"), ("sheet", "sheet"), ("plan", "plan"),
        ("export", "export"), ("check", "check"), ("serve", "serve"), ("lab", "lab"),
        ("class", "class_command"))
}
"""Every subcommand's name and module, in the order ``--help`` lists them. A module defines
``NAME``, ``HELP`` and ``command`` (a Typer function), or ``app`` for a command with
subcommands of its own (``lab``); it is imported when its command is first looked up."""


class _Commands(MutableMapping[str, Any]):
    """The root's subcommands by name, each imported and built (its click command, from the
    Typer function) when first looked up.

    Typer builds a command by reading every parameter's annotations: about 3 ms a command,
    0.06 s for all of them, while a command line runs one (start-up budget: `attn-tutor trace
    qkv --json` ≤ 0.3 s). ``--help`` looks every one up for its list.
    """

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = dict(modules)
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = _build(self._modules[name])   # KeyError: no such command
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._modules.pop(name, None)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter({**self._modules, **self._built})

    def __len__(self) -> int:
        return len({**self._modules, **self._built})


class _LazyGroup(TyperGroup):
    """The root command: a Typer group whose subcommands are :class:`_Commands`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands(COMMANDS)


app = typer.Typer(
    name="attn-tutor",
    help=HELP,
    cls=_LazyGroup,
    add_completion=False,
    invoke_without_command=True,
    # commands, option names and fixed choices in any case: `attn-tutor LAB Train --TASK Copy`
    context_settings={"help_option_names": ["-h", "--help"], "token_normalize_func": str.lower},
    pretty_exceptions_enable=False,
    rich_markup_mode="rich" if _styled_help() else None,
)


def _build(path: str) -> Any:
    """The click command of one subcommand module (see :data:`COMMANDS`), as ``app.command``
    or ``app.add_typer`` on the root would build it."""
    # imported here, the asked command alone (start-up budget: `trace qkv --json` ≤ 0.3 s)
    module = importlib.import_module(path)
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                         rich_markup_mode=app.rich_markup_mode)
    if hasattr(module, "app"):
        holder.add_typer(module.app, name=module.NAME, help=module.HELP)
    else:
        holder.command(name=module.NAME, help=module.HELP)(module.command)
    return typer.main.get_group(holder).commands[module.NAME]


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        typer.echo(f"attn-tutor {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        reason = why_not_interactive()
        if reason is None:
            from tutor.app import run_app  # deferred: loads textual (start-up time)

            run_app()
        else:  # say why there is help instead of the tutor (on stderr: stdout stays the help)
            print(f"attn-tutor: {reason}; here is the command-line help instead.", file=sys.stderr)
            typer.echo(ctx.get_help())


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: usage mistakes become one line on stderr and exit 2; a
    bug is one line too (exit 70), naming the file with the full report."""
    degrade_to_ascii()

    command = typer.main.get_command(app)   # built once: choose_kernels reads it too
    if argv is None:  # the console script: this process is the command's own
        choose_kernels(sys.argv[1:], command)
    try:
        code = command.main(args=argv, prog_name="attn-tutor", standalone_mode=False)
    except TyperException as exc:  # unknown option, missing value, bad choice or number
        if type(exc).__name__ == "NoArgsIsHelpError":  # a command group run bare: its help
            print(exc.format_message())
            raise SystemExit(0) from None
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        from tutor.render.safe import clean  # deferred: loads rich (start-up time)

        message = usage_message(one_line(exc.format_message()), sys.argv[1:] if argv is None else argv)
        print(f"attn-tutor: error: {one_line(clean(message))}{hint}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except (Abort, KeyboardInterrupt):
        print("attn-tutor: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as exc:  # a bug: one line here, the traceback in a report file
        print(report_internal_error(exc), file=sys.stderr)
        raise SystemExit(EXIT_INTERNAL) from None
    raise SystemExit(code if isinstance(code, int) else 0)
