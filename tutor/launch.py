"""The ``attn-tutor`` command's entry point.

The bare command on a terminal opens the full-screen tutor straight away, without loading the
command-line parser (typer costs about 0.1 s of CPU before the first paint); anything else
goes to :func:`tutor.cli.main`.
"""

from __future__ import annotations

import sys

_own_process = False  # set by tutor.cli.main when it runs as the console script


def mark_own_process() -> None:
    """This process runs one command and exits (the console script, not a caller's main(argv))."""
    global _own_process
    _own_process = True


def interpret_if_small(name: str, overrides: dict) -> None:
    """A command that builds one trace, in a process of its own: run the kernels interpreted
    when the trace is worked-example sized (``engine.traces.interpretable``), so no numba is
    loaded. A test or a program that calls ``tutor.cli.main(argv)`` keeps compiled kernels:
    the mode is per process and it may have other work for them."""
    if _own_process:
        from engine.traces import interpret_if_small as choose

        choose(name, overrides)


def interpret_worked_examples() -> None:
    """A command whose every engine call is worked-example sized, in a process of its own: run
    the kernels interpreted, so no numba is loaded or compiled. For the heatmap listing (each
    trace built on listing inputs, ``engine.traces.build_for_listing``), the exports, and the
    line-based quiz and paper (generated problems and mark schemes on 2-5 element inputs). Not
    for the lab, the TUI or a trace the student made big: those want compiled kernels."""
    if _own_process:
        from engine._jit import use_interpreter

        use_interpreter()


def main() -> None:
    """Console-script entry point (``attn-tutor``, ``python -m tutor``)."""
    if len(sys.argv) <= 1:
        from tutor.terminal import is_interactive

        if is_interactive():
            from tutor.app import run_app

            run_app()
            return
    from tutor.cli import main as cli_main

    cli_main()
