"""User mistakes become one line on stderr and exit code 2 — never a traceback."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

EXIT_USAGE = 2
EXIT_STORE = 1
"""The progress file could not be read or written: not the user's mistake."""


class UserError(Exception):
    """Something the user asked for that cannot be done; the message says what and why."""


def fail(message: str, code: int = EXIT_USAGE):
    """Print ``attn-tutor: error: message`` to stderr and exit with ``code``; the message
    often echoes what the user typed or a file held, so terminal control is removed."""
    import typer

    from tutor.render.safe import clean

    print(f"attn-tutor: error: {clean(message)}", file=sys.stderr)
    raise typer.Exit(code)


def user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn :class:`UserError` and input ``ValueError`` into a one-line message and exit 2.

    A ``StoreError`` (the progress file locked, the disk full) is one line too, with exit 1.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (UserError, ValueError) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except Exception as exc:
            if not _is_store_error(exc):
                raise
            fail(str(exc), code=EXIT_STORE)  # progress could not be read or saved
        except KeyboardInterrupt:
            print("attn-tutor: interrupted", file=sys.stderr)
            raise SystemExit(130) from None

    return wrapper


def _is_store_error(exc: Exception) -> bool:
    """Checked lazily: importing the store (sqlite3) would slow ``attn-tutor --help``."""
    from tutor.store.faults import StoreError

    return isinstance(exc, StoreError)


def existing_file(path: str | Path, where: str, expected: str) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is a file; otherwise :class:`UserError`
    ``"{where}: is a folder; expected {expected}"`` (or ``no such file``)."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{where}: is a folder; expected {expected}")
    if not p.is_file():
        raise UserError(f"{where}: no such file; expected {expected}")
    return p
