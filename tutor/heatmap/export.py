"""Save heatmaps as text (``.txt``), SVG (``.svg``) or HTML (``.html``) by the file's extension.

Text is the plain, monochrome rendering (the character ramp); SVG and HTML are recorded from a
Rich console (``Console(record=True)``) and keep the colours unless ``color=False``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console, RenderableType

from tutor.errors import UserError

SAVE_FORMATS = {".txt": "text", ".svg": "SVG", ".html": "HTML", ".htm": "HTML"}


def save_format(path: str | Path, where: str = "--save") -> str:
    """The format name for ``path``'s extension, or one line saying which extensions work."""
    suffix = Path(path).suffix.lower()
    if suffix not in SAVE_FORMATS:
        shown = repr(suffix) if suffix else "no extension"
        raise UserError(f"{where} {path}: unknown file type {shown}; expected .txt, .svg or .html")
    return SAVE_FORMATS[suffix]


def export(
    path: str | Path,
    plain_text: str,
    renderables: Callable[[], Sequence[RenderableType]],
    *,
    width: int,
    title: str = "attn-tutor heatmap",
    where: str = "--save",
) -> str:
    """Write ``path``; returns the format name.

    Args:
        path: Where to write; the extension picks the format.
        plain_text: What a ``.txt`` file holds.
        renderables: Makes the Rich renderables recorded for ``.svg`` / ``.html`` (called only
            for those formats).
        width: Console width for the recording, in cells.
        title: The SVG window title / HTML page title.
        where: How error messages name the option.
    """
    from tutor.render.safe import clean

    kind = save_format(path, where)
    title = clean(title, lines=False)  # a file's "title" may carry terminal control
    plain_text = clean(plain_text)
    if kind == "text":
        data = plain_text.rstrip("\n") + "\n"
    else:
        console = Console(
            record=True, width=width, file=io.StringIO(), force_terminal=True,
            color_system="truecolor", highlight=False, legacy_windows=False,
        )
        for item in renderables():
            console.print(item)
        if kind == "SVG":
            data = console.export_svg(title=title)
        else:
            data = console.export_html(inline_styles=True)
            data = data.replace("<head>", f"<head>\n<title>{_escape(title)}</title>", 1)
    try:
        Path(path).write_text(data, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{where} {path}: could not write the file ({exc.strerror or exc})") from None
    return kind


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
