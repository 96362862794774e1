"""Heatmaps for the terminal: the list of traces that draw one, and drawing a set of them
(colour on a terminal, plain text otherwise) with their errata, optionally saved to a file.

``attn-tutor heatmap`` parses its options into (weights, rows, cols, title, kind) tuples and
hands them to :func:`show`.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import typer
from rich.console import Console, RenderableType
from rich.text import Text

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.heatmap.export import export
from tutor.heatmap.model import Scale
from tutor.heatmap.render import HeatmapOptions, heatmap_text, render_heatmap
from tutor.render.plain import errata_block
from tutor.render.safe import shown_path
from tutor.render.text import asciify

Map = tuple[Any, Any, Any, str, str]
"""(weights, row labels, column labels, title, kind) of one heatmap."""


def listing(ascii_only: bool = False) -> str:
    """Build every trace (lazily, here) and list those with heatmaps; broken ones are skipped.
    Only the heatmaps' titles and shapes are shown, so each trace is built for listing
    (:func:`engine.traces.build_for_listing`), which a CLI process runs interpreted."""
    from engine.traces import build_for_listing as build  # looked up per call: tests replace it
    from engine.traces import list_traces  # looked up per call: tests replace it

    found, skipped = [], []
    for info in list_traces():
        try:
            trace = build(info.name)
        except Exception:  # a broken builder: the listing must not crash
            skipped.append(info.name)
            continue
        if trace.heatmaps:
            shapes = ", ".join(
                f"{h.title} ({h.weights.shape[0]}x{h.weights.shape[1]})" for h in trace.heatmaps
            )
            found.append((info, shapes))
    if skipped:
        print(f"(skipped {len(skipped)} trace{'s' if len(skipped) > 1 else ''} that could not be "
              f"built: {', '.join(skipped)})", file=sys.stderr)
    if not found:
        lines = ["No trace draws a heatmap yet."]
    else:
        width = max(len(info.name) for info, _ in found)
        lines = ["Traces with heatmaps (attn-tutor heatmap NAME; --set, --file, --index, --values):", ""]
        lines += [
            f"  sec {info.section:<3}{info.name:<{width + 2}}{info.title}: {shapes}" for info, shapes in found
        ]
    lines += ["", "Or draw your own: attn-tutor heatmap --from weights.csv --rows \"j' ai mal au pieds\" "
                  "--cols \"my feet hurt\""]
    text = "\n".join(lines) + "\n"
    return asciify(text) if ascii_only else text


def show(maps: list[Map], errata: Sequence[Any], *, values: bool, scale: Scale, ascii_only: bool,
         width: int | None, save: Path | None) -> None:
    """Print ``maps`` (then the errata, a trace's :class:`engine.trace.Erratum` list) and, with
    ``save``, write them to that file."""
    width = width or shutil.get_terminal_size((80, 24)).columns
    color = terminal.use_color() and not ascii_only
    # wrapped once, to the width everything is drawn at: the console and the SVG/HTML recording
    # print these lines as they are (no_wrap), so no line is wrapped a second time
    errata = errata_block(errata, ascii_only=ascii_only, width=width)

    def options(with_color: bool) -> HeatmapOptions:
        return HeatmapOptions(width=width, values=values, scale=scale, color=with_color, ascii=ascii_only)

    if ascii_only:
        maps = [(w, [asciify(x) for x in r] if r else r, [asciify(x) for x in c] if c else c,
                 asciify(t), k) for w, r, c, t, k in maps]

    def renderables(with_color: bool) -> list:
        out: list[RenderableType] = []
        for k, (w, r, c, t, kind) in enumerate(maps):
            if k:
                out.append(Text(""))
            out.append(render_heatmap(w, r, c, t, _with_kind(options(with_color), kind)))
        if errata:
            out += [Text(""), Text("\n".join(errata), no_wrap=True, overflow="fold")]
        return out

    texts = [heatmap_text(w, r, c, t, _with_kind(options(False), kind)) for w, r, c, t, kind in maps]
    plain = "\n\n".join(texts) + ("\n\n" + "\n".join(errata) if errata else "") + "\n"
    if color:
        console = Console(highlight=False, width=width)
        for item in renderables(True):
            console.print(item)
    else:
        typer.echo(plain, nl=False)
    if save is not None:
        kind = export(save, plain, lambda: renderables(not ascii_only), width=width,
                      title=maps[0][3] if maps else "attn-tutor heatmap")

        typer.echo(f"wrote {shown_path(save)} ({kind})", err=True)


def _with_kind(opts, kind: str):
    return replace(opts, kind=kind if kind in ("weights", "scores") else "auto")
