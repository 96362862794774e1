"""Attention heatmaps for the terminal: rows are output (query) tokens, columns input (key) tokens.

* :mod:`tutor.heatmap.render` — the renderer: Rich colour plus a monochrome character ramp, so
  the picture still reads with ``NO_COLOR``, ``TERM=dumb``, ``--ascii`` or in a text file.
  The public entry points are :func:`~tutor.heatmap.render.render_heatmap` (a Rich renderable)
  and :func:`~tutor.heatmap.render.heatmap_text` (plain text), both taking
  ``(weights, row_labels, col_labels, title, options)``.
* :mod:`tutor.heatmap.load` — weights from ``.csv``/``.tsv``, ``.npy`` and ``.json`` files,
  and label files.
* :mod:`tutor.heatmap.export` — save as ``.txt``, ``.svg`` or ``.html``.

Nothing here computes attention: the weights come from a trace, the lab or a file.
"""

from tutor.heatmap.render import RAMP, HeatmapOptions, heatmap_text, render_heatmap

__all__ = ["RAMP", "HeatmapOptions", "heatmap_text", "render_heatmap"]
