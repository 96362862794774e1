"""Save heatmaps as text (``.txt``), SVG (``.svg``) or HTML (``.html``) by the file's extension.

Text is the plain, monochrome rendering (the character ramp); SVG and HTML are recorded from a
Rich console (``Console(record=True)``) and keep the colours unless ``color=False``.
"""

from __future__ import annotations

import inspect
import io
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console, RenderableType

from tutor import atomic
from tutor.errors import UserError
from tutor.render.safe import clean, shown_path

SAVE_FORMATS = {".txt": "text", ".svg": "SVG", ".html": "HTML", ".htm": "HTML"}

MONOSPACE = "ui-monospace, Menlo, 'DejaVu Sans Mono', Consolas, 'Liberation Mono', monospace"
"""The SVG's font: whatever monospace font the machine has (the HTML page uses a stack too)."""


def offline_svg_format() -> str:
    """Rich's SVG template without its web font: Rich's own loads Fira Code from a CDN (an
    ``@font-face`` with ``https://`` URLs), so a saved heatmap would fetch from the internet
    when opened, and draw in a fallback font offline. This one names :data:`MONOSPACE` and
    loads nothing (``tests/test_heatmap_render.py`` checks that no URL is left)."""
    template = inspect.signature(Console.export_svg).parameters["code_format"].default
    template = re.sub(r"@font-face\s*\{\{.*?\}\}\s*", "", template, flags=re.DOTALL)
    template = re.sub(r"<!--.*?-->\s*", "", template, flags=re.DOTALL)
    return re.sub(r"font-family:\s*Fira Code,\s*monospace", f"font-family: {MONOSPACE}",
                  template)


def save_format(path: str | Path, where: str = "--save") -> str:
    """The format name for ``path``'s extension, or one line saying which extensions work."""
    suffix = Path(path).suffix.lower()
    if suffix not in SAVE_FORMATS:
        shown = repr(suffix) if suffix else "no extension"
        raise UserError(
            f"{where} {shown_path(path)}: unknown file type {shown}; expected .txt, .svg or .html"
        )
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
            data = console.export_svg(title=title, code_format=offline_svg_format())
        else:
            data = console.export_html(inline_styles=True)
            data = data.replace("<head>", f"<head>\n<title>{_escape(title)}</title>", 1)
    try:
        atomic.write_text(path, data)
    except OSError as exc:
        raise UserError(f"{where} {shown_path(path)}: could not write the file "
                        f"({exc.strerror or exc})") from None
    return kind


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
