"""The run mode: whether this process runs the engine's kernels compiled or interpreted, chosen
once, before anything imports the engine.

A command that only builds worked examples (a trace or heatmap on worked-example sized inputs,
the heatmap listing, the exports, the line-based quiz and paper) runs the engine's kernels as
plain Python: on 3 × 4 matrices that is quicker than loading numba and its cached machine code.
:func:`choose_kernels` looks at the command line and, for those commands, sets
``ATTN_TUTOR_KERNELS=python``, which ``engine._jit`` reads once when it is imported. The
full-screen tutor, the lab, a big trace and the ``scaling`` trace keep compiled kernels, and so
does a program or test that calls ``tutor.cli.main(argv)`` in its own process.
"""


from __future__ import annotations

import os
import sys
from typing import Any

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.names import resolve

KERNELS_VARIABLE = "ATTN_TUTOR_KERNELS"
"""``engine._jit.KERNELS_VARIABLE`` (not imported from there: importing it reads the variable)."""

_WORKED_COMMANDS = frozenset({"trace", "heatmap", "export", "quiz", "paper"})
"""Commands that may run on worked examples only (the rest never do)."""


def _stdout_is_terminal() -> bool:
    return terminal.is_interactive()


def _params(command: Any, word: str, args: list[str]) -> dict[str, Any] | None:
    """The options of subcommand ``word`` as the CLI's own parser reads them (None if it
    cannot: the command then reports the mistake itself, with compiled kernels)."""
    sub = getattr(command, "commands", {}).get(word)
    if sub is None:
        return None
    try:
        ctx = sub.make_context(word, list(args), resilient_parsing=True,
                               token_normalize_func=str.lower)
    except Exception:  # noqa: BLE001 - any parse failure: leave the choice to compiled kernels
        return None
    return dict(ctx.params)


def _small_trace(name: str | None, sets: Any, file: Any) -> bool:
    """Whether the trace ``name`` on these inputs is worked-example sized (no name: a listing)."""
    if name is None:
        return True
    # numpy and rich: only for a trace or heatmap command, never for `--help`
    from engine.traces import interpretable, list_traces
    from tutor.inputs import gather_inputs  # deferred: loads rich (start-up time)

    try:
        resolved = resolve(name, [t.name for t in list_traces()], "trace", "")
        return interpretable(resolved, gather_inputs(list(sets or []), file))
    except Exception:  # noqa: BLE001 - a mistake in the inputs: the command reports it
        return False


def worked_examples_only(argv: list[str], command: Any) -> bool:
    """Whether the command line ``argv`` (without the program name) runs only worked-example
    sized engine calls, and never the full-screen tutor. ``command``: the CLI's click command
    (``typer.main.get_command(tutor.cli.app)``)."""
    if not argv or argv[0].startswith("-") or argv[0].lower() not in _WORKED_COMMANDS:
        return False
    word = argv[0].lower()
    if word == "export":
        return True
    p = _params(command, word, argv[1:])
    if p is None:
        return False
    if word in ("quiz", "paper"):             # line-based unless it opens the tutor's screen
        return bool(p.get("plain")) or not _stdout_is_terminal()
    if word == "heatmap":
        if p.get("source") is not None:       # a file's matrix: no trace is built
            return True
        return _small_trace(p.get("name"), p.get("sets"), p.get("file"))
    if p.get("name") is None or p.get("schema"):   # trace: the listing or the schema
        return True
    if p.get("inputs"):
        return _small_trace(p.get("name"), (), None)
    opens_tutor = (not (p.get("plain") or p.get("as_json") or p.get("markdown"))
                   and p.get("output") is None and p.get("step") is None
                   and not p.get("checks")
                   and _stdout_is_terminal())
    return not opens_tutor and _small_trace(p.get("name"), p.get("sets"), p.get("file"))


def choose_kernels(argv: list[str], command: Any) -> bool:
    """Run this process's kernels interpreted when :func:`worked_examples_only` says so;
    returns whether it does. Only the console script calls it, before any engine import."""
    if "engine._jit" in sys.modules:
        raise RuntimeError("choose_kernels: the engine's kernels were imported already; the "
                           "console script must choose before any command runs")
    if worked_examples_only(argv, command):
        os.environ[KERNELS_VARIABLE] = "python"
        return True
    return False
