"""A lesson (Markdown) as plain text, for pipes, files and screen readers (``lesson --plain``).

The TUI's Learn screen renders the same Markdown with Rich; this is the renderer for
everything that is not a terminal.
"""

from __future__ import annotations

import re
import textwrap

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    return _CODE.sub(r"\1", _ITALIC.sub(r"\1", _BOLD.sub(r"\1", text)))


def _table(rows: list[str]) -> list[str]:
    cells = [[_inline(c.strip()) for c in r.strip().strip("|").split("|")] for r in rows]
    cells = [r for r in cells if not all(set(c) <= set("-: ") for c in r)]  # drop | --- |
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(max(map(len, cells)))]
    return ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in cells]


_ITEM = re.compile(r"\s*(?:[-*] |\d+\. )")


def _wrap(line: str, width: int = 96) -> list[str]:
    """A paragraph (or list item) on one line, refilled to ``width`` when it is longer."""
    if len(line) <= width:
        return [line]
    found = re.match(r"\s*(?:[-*] |\d+\. )?", line)  # always matches (all of it optional)
    indent = found[0] if found else ""
    return textwrap.wrap(line, width, subsequent_indent=" " * len(indent), break_on_hyphens=False)


def _starts_block(line: str) -> bool:
    """True for a line that cannot continue the paragraph above it."""
    return (not line.strip() or line.startswith("```") or line.lstrip().startswith("|")
            or re.match(r"#{1,6} ", line) is not None or _ITEM.match(line) is not None)


def plain_text(markdown: str) -> str:
    """Markdown → plain text: underlined headings, aligned tables, indented formulas, no markup."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(("    " + lines[i]).rstrip())
                i += 1
        elif line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out += _table(rows)
            continue
        elif m := re.match(r"(#{1,6}) (.*)", line):
            title = _inline(m[2].strip())
            out.append(title)
            if len(m[1]) <= 2:
                out.append(("=" if len(m[1]) == 1 else "-") * len(title))
        elif not line.strip():
            out.append("")
        else:
            # Markdown joins a paragraph's lines, so refill them together: wrapping each
            # source line alone left a lone word on its own line when one ran a little long
            para = [line.rstrip()]
            while i + 1 < len(lines) and not _starts_block(lines[i + 1]):
                i += 1
                para.append(lines[i].strip())
            out += _wrap(_inline(" ".join(para)).rstrip())
        i += 1
    return "\n".join(out).rstrip() + "\n"
