"""Names the student types (lessons, traces, quiz topics and modes): case does not matter,
``_`` is ``-``, and a near miss gets "did you mean …".

Commands, option names and fixed choices (``--task``, ``--scale``) are made case-insensitive
by the CLI's ``token_normalize_func`` (:mod:`tutor.cli`); everything named by data goes
through :func:`resolve` here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from tutor.errors import UserError
from tutor.limits import shorten


def normal(name: str) -> str:
    """The form names are compared in: stripped, case-folded, ``_`` and spaces as ``-``."""
    return "-".join(name.strip().casefold().replace("_", "-").split())


def find(name: str, choices: Iterable[str]) -> str | None:
    """The choice ``name`` means (exactly, or after :func:`normal`), or None."""
    options = list(choices)
    if name in options:
        return name
    key = normal(name)
    return next((c for c in options if normal(c) == key), None)


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``" Did you mean 'qkv'?"`` for the closest choices, or ``""`` when none is close."""
    options = list(choices)
    by_normal = {normal(c): c for c in options}
    close = difflib.get_close_matches(normal(name)[:60], list(by_normal), n=2, cutoff=0.6)
    if not close:
        return ""
    shown = " or ".join(repr(by_normal[c]) for c in close)
    return f" Did you mean {shown}?"


def resolve(name: str, choices: Iterable[str], what: str, listing: str) -> str:
    """The choice ``name`` means; otherwise :class:`UserError`:
    ``no WHAT 'NAME'. Did you mean …? LISTING`` (``listing`` says how to see them all)."""
    options = list(choices)
    found = find(name, options)
    if found is not None:
        return found
    raise UserError(f"no {what} {shorten(name)}.{did_you_mean(name, options)} {listing}".rstrip())
