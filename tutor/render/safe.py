"""Data strings on their way to a terminal: shown as they are, never as markup or control.

Every string that comes from data — trace values, tokens and labels, titles, notes, errata,
lesson and quiz text, a file's headers and title, a weights record's fields, what a student
typed — reaches a screen through this module, so two things cannot happen:

- **markup**: Rich and Textual read ``[the, a]`` or ``[my feet hurt]`` as a style tag and
  drop it, so a value vanishes. :func:`text` gives a :class:`rich.text.Text` (never parsed),
  :func:`escape` the escaped string for the few places that mix data into markup.
- **terminal control**: a title such as ``"\\x1b]52;c;…\\x1b\\\\"`` (OSC 52) would write the
  user's clipboard; other sequences move the cursor, retitle the window or clear the screen.
  :func:`clean` removes escape sequences and every other control character (C0, DEL, C1)
  and the bidirectional overrides that make text read differently from what it holds.
  :func:`text` and :func:`escape` clean first, and the plain renderers (``--plain``,
  Markdown, heatmap text, error lines) pass their whole output through :func:`clean`.

JSON output keeps the data exact: :func:`json_dumps` writes every control character as a
``\\u`` escape instead.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

# An escape sequence as a terminal reads it, in its 7-bit (ESC …) or 8-bit (C1) form: CSI
# (ESC [ or 0x9b, parameters, a final byte); OSC / DCS / SOS / PM / APC (ESC ] P X ^ _ or
# 0x9d 0x90 0x98 0x9e 0x9f, up to BEL, ST or the end of the string); or ESC and one character.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b.?",
    re.DOTALL,
)
# every other control: C0 but tab and newline, DEL, C1, and the bidi embeddings/overrides/isolates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# as _CONTROL, plus tab and newline and the lone surrogates that stand for bytes not UTF-8
_PATH_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_JSON_CONTROL = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(value: object, *, lines: bool = True) -> str:
    """``str(value)`` with terminal control removed.

    Escape sequences go whole; a tab becomes a space, ``\\r\\n`` a newline; other control
    characters are dropped. Newlines stay unless ``lines`` is False (one-line labels), when
    they become spaces.
    """
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():  # the common case: nothing to do
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    text = text.replace("\t", " ")
    if not lines:
        text = text.replace("\n", " ")
    return _CONTROL.sub("", text)


def shown_path(path: object) -> str:
    """A file or folder name as the tutor prints it: one line, no terminal control.

    Names come from what a student typed, a folder's name or the environment
    (``ATTN_TUTOR_HOME``), and a name may hold an escape sequence. As ``ls`` does on a
    terminal, each control character (C0 with tab and newline, DEL, C1, bidi overrides) and
    each byte that is not UTF-8 shows as ``?``: what is left cannot drive the terminal, and
    the name still shows where the file is. Every message that names a path ("Wrote …",
    "cannot write …", the store's warnings) goes through here; ``tests/test_shown_paths.py``
    holds the tutor's messages to it.
    """
    name = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if name.isprintable():
        return name
    return _PATH_CONTROL.sub("?", name)


def text(value: object, style: str = "", *, lines: bool = True) -> Text:
    """A data string as Rich :class:`~rich.text.Text`: cleaned, never read as markup."""
    from rich.text import Text  # deferred: `trace qkv --json` ≤ 0.3 s never loads rich (start-up time)

    return Text(clean(value, lines=lines), style=style)


def escape(value: object, *, lines: bool = True) -> str:
    """A data string cleaned and escaped for a Rich or Textual markup string."""
    from rich.markup import escape as rich_escape  # deferred: `trace qkv --json` ≤ 0.3 s (start-up time)

    return rich_escape(clean(value, lines=lines))


def assemble(*parts: str | Text | tuple[str, str]) -> Text:
    """:meth:`Text.assemble` with every plain string and ``(string, style)`` part cleaned."""
    out: list[Any] = []
    for part in parts:
        if isinstance(part, tuple):
            out.append((clean(part[0]), part[1]))
        elif isinstance(part, str):
            out.append(clean(part))
        else:
            out.append(part)
    from rich.text import Text  # deferred: `trace qkv --json` ≤ 0.3 s never loads rich (start-up time)

    return Text.assemble(*out)


def json_dumps(data: Any, **kwargs: Any) -> str:
    """:func:`json.dumps` (Unicode kept) with DEL, C1 and bidi controls written as ``\\u``
    escapes too (json escapes C0 itself), so the output is safe to print and still exact."""
    out = json.dumps(data, ensure_ascii=False, **kwargs)
    return _JSON_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
