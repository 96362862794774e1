"""The ``attn-tutor`` command's entry point.

The bare command on a terminal opens the full-screen tutor straight away, without loading the
command-line parser (typer costs about 0.1 s of CPU before the first paint); anything else
goes to :func:`tutor.cli.main`, which chooses the run mode (:mod:`tutor.runmode`) before any
command imports the engine.
"""

from __future__ import annotations

import sys

from tutor import terminal  # its functions looked up per call (tests replace them)


def main() -> None:
    """Console-script entry point (``attn-tutor``, ``python -m tutor``)."""
    if len(sys.argv) <= 1:
        if terminal.is_interactive():
            from tutor.app import run_app  # textual: only when the tutor opens

            run_app()
            return
    from tutor.cli import main as cli_main  # typer: not before the tutor's first paint

    cli_main()
