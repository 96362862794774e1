"""User mistakes become one line on stderr and exit code 2 — never a traceback.

Anything else that goes wrong inside a command (a bug) is one line too, exit 70, naming the
file that holds the full report (:func:`report_internal_error`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

EXIT_USAGE = 2
EXIT_STORE = 1
"""The progress file could not be read or written: not the user's mistake."""
EXIT_INTERNAL = 70
"""A bug in attn-tutor (``EX_SOFTWARE``): the full report is in a file the message names."""
MAX_MESSAGE = 300
"""Longest error line: a message echoes at most a short prefix of what was typed."""


class UserError(Exception):
    """Something the user asked for that cannot be done; the message says what and why."""


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``attn-tutor: error: message`` to stderr and exit with ``code``; the message
    often echoes what the user typed or a file held, so terminal control is removed."""
    import typer  # deferred: loads typer (start-up time)

    from tutor.render.safe import clean  # deferred: loads rich (start-up time)

    print(f"attn-tutor: error: {one_line(clean(message))}", file=sys.stderr)
    raise typer.Exit(code)


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """The first line of ``message``, its middle cut out when it is longer than ``limit``.

    Messages are written to quote only a short prefix of the input; this is the net under
    the ones that do not (a library's message that quotes the whole value).
    """
    lines = str(message).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) <= limit:
        return text
    tail = limit // 3
    return f"{text[:limit - tail - 5]} [...] {text[-tail:]}"


_PARSER_PHRASES = [  # the parser's wording → ours
    # typer < 0.29 checks types with click ("'two' is not a valid int.")
    # ("… valid int range." / "float range." when the option has bounds)
    (r"'.*' is not a valid int(?:eger)?(?: range)?\.?$", "expected a whole number"),
    (r"'.*' is not a valid float(?: range)?\.?$", "expected a number"),
    # typer ≥ 0.29 checks them through pydantic (pyproject pins below it: pydantic costs
    # ~0.2 s on every start), kept so a newer typer still reads well
    (r"(?:Value error, )?'.*' is not one of (.*?)\.?$", r"expected one of \1"),
    (r"Value error, (.*?)\.?$", r"\1"),
    (r"Input should be a valid integer.*$", "expected a whole number"),
    (r"Input should be a valid number.*$", "expected a number"),
    (r"Input should be greater than or equal to (\S+)$", r"expected \1 or more"),
    (r"Input should be greater than (\S+)$", r"expected more than \1"),
    (r"Input should be less than or equal to (\S+)$", r"expected at most \1"),
    (r"Input should be less than (\S+)$", r"expected less than \1"),
    (r"Input should be (.*)$", r"expected \1"),
]


def _range_reason(reason: str) -> str | None:
    """click's ``0 is not in the range 1<=x<=100000.`` (or ``x>=0``, ``0<x<1``) as the bound
    the value broke: ``expected 1 or more``, ``expected at most 100000``, ``expected more
    than 0`` (None for any other reason)."""
    found = re.match(r"(\S+) is not in the range (.*?)\.?$", reason)
    if not found:
        return None
    value, bounds = found.groups()
    low = re.match(r"(\S+?)(<=?)x", bounds)               # "1<=x…", "0<x…"
    if low is not None:
        low_at, low_shut = low.group(1), low.group(2) == "<="
    elif (only := re.fullmatch(r"x(>=?)(\S+)", bounds)) is not None:   # "x>=0"
        low_at, low_shut = only.group(2), only.group(1) == ">="
    else:
        low_at, low_shut = None, True
    high = re.search(r"x(<=?)(\S+)$", bounds)             # "…x<=100000", "…x<1"
    try:
        v = float(value)
        if low_at is not None and (v < float(low_at) or (not low_shut and v == float(low_at))):
            return f"expected {low_at} or more" if low_shut else f"expected more than {low_at}"
        if high is not None:
            return (f"expected at most {high.group(2)}" if high.group(1) == "<="
                    else f"expected less than {high.group(2)}")
    except ValueError:
        pass
    return None


def usage_message(message: str, argv: list[str]) -> str:
    """A command-line parser's complaint in the tutor's words: ``--steps abc: expected a whole
    number`` rather than ``Invalid value for '--steps': 'abc' is not a valid int.`` (the value
    quoted from ``argv`` when it is there)."""
    found = re.match(r"Invalid value for ((?:'[^']+'(?: / )?)+): (.*)$", message)
    if not found:
        return message
    names, reason = re.findall(r"'([^']+)'", found.group(1)), found.group(2)
    ranged = _range_reason(reason)
    if ranged is not None:
        reason = ranged
    else:
        for pattern, replacement in _PARSER_PHRASES:
            reason, hits = re.subn(pattern, replacement, reason)
            if hits:
                break
    return f"{_option_as_typed(names, argv)}: {reason}"


def _option_as_typed(names: list[str], argv: list[str]) -> str:
    """``--steps abc`` as the student typed it (the first name if it is not in argv)."""
    for i, token in enumerate(argv):
        for name in names:
            if token == name and i + 1 < len(argv):
                return f"{name} {argv[i + 1]}"
            if token.startswith(name + "="):
                return f"{name} {token[len(name) + 1:]}"
    return names[0]


def report_internal_error(exc: BaseException) -> str:
    """Write ``exc``'s traceback to a report file; the one line to print about it."""
    from tutor import __version__, atomic  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
    from tutor.render.safe import shown_path  # deferred: loads rich (start-up time)

    text = (f"attn-tutor {__version__}, Python {sys.version.split()[0]}\n"
            f"argv: {sys.argv!r}\n\n" + "".join(traceback.format_exception(exc)))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    where = "could not write the report"
    for folder in _report_folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            atomic.write_text(folder / name, text)
        except OSError:
            continue
        where = f"the full report is in {shown_path(folder / name)}"
        break
    what = one_line(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, 120)
    return (f"attn-tutor: internal error ({what}); {where}. This is a bug in attn-tutor, "
            "not something you typed.")


def _report_folders() -> list[Path]:
    import tempfile  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    from tutor.paths import data_dir  # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean

    try:
        home = data_dir() / "reports"
    except Exception:  # noqa: BLE001 - a report must not fail for want of a folder
        home = None
    return [p for p in (home, Path(tempfile.gettempdir()) / "attn-tutor-reports") if p]


def user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn :class:`UserError` and input ``ValueError`` into a one-line message and exit 2.

    A ``StoreError`` (the progress file locked, the disk full) is one line too, with exit 1.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (UserError, ValueError) as exc:
            fail(str(exc) if str(exc).strip() else type(exc).__name__)
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
    from tutor.store.faults import StoreError  # deferred: loads rich (start-up time)

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
