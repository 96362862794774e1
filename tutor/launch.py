"""The ``attn-tutor`` command's entry point.

The bare command on a terminal opens the full-screen tutor straight away, without loading the
command-line parser (typer, and the pydantic it builds every parameter with, cost about 0.1 s
of CPU before the first paint); anything else goes to :func:`tutor.cli.main`.
"""

from __future__ import annotations

import sys


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
