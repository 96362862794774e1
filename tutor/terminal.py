"""What kind of terminal we are talking to (TTY, colour, size)."""

from __future__ import annotations

import codecs
import os
import sys

_FOLD = "attn-tutor-ascii"


def is_interactive() -> bool:
    """True when both ends are a real terminal that can run the TUI (not ``TERM=dumb``)."""
    return why_not_interactive() is None


def why_not_interactive() -> str | None:
    """In one line, why the full-screen tutor cannot open here (``None`` when it can)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "input or output is not a terminal (a pipe or a file), so the full-screen tutor cannot open"
    if os.environ.get("TERM", "") == "dumb":
        return ("TERM=dumb: this terminal cannot draw the full-screen tutor (use a terminal "
                "with cursor control, or unset TERM=dumb)")
    return None


def use_color() -> bool:
    """Colour only on a TTY, and never with ``NO_COLOR`` set or ``TERM=dumb``."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    return sys.stdout.isatty()


def degrade_to_ascii() -> None:
    """Write ASCII to a stdout/stderr whose encoding is not UTF (``PYTHONIOENCODING=ascii`` or
    ``latin-1``), so no command dies of an encode error: ``—`` becomes ``--``, ``√`` ``sqrt``,
    ``✓`` ``ok``, anything with no ASCII spelling ``?``. (``LANG=C`` needs nothing: Python
    itself switches to UTF-8 there.) Rich sees an ASCII stream and draws ASCII boxes."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if not encoding or encoding.startswith("utf") or not hasattr(stream, "reconfigure"):
            continue

        codecs.register_error(_FOLD, _fold)
        try:
            stream.reconfigure(encoding="ascii", errors=_FOLD)
        except (OSError, ValueError):  # a stream that cannot change: leave it as it is
            pass


def _fold(exc: UnicodeError) -> tuple[str, int]:
    """The codec error handler: an ASCII spelling of the characters that did not encode."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    from tutor.render.text import asciify  # only on this path: it loads numpy

    text = asciify(exc.object[exc.start:exc.end])
    return "".join(ch if ch.isascii() else "?" for ch in text), exc.end
