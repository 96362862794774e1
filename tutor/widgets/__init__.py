"""Reusable Textual widgets, one per module (frogmouth style); each sends its own nested messages.

* :mod:`tutor.widgets.heatmap` — :class:`~tutor.widgets.heatmap.Heatmap`, attention weights as a
  grid with a cell cursor (``Heatmap.CursorMoved``, ``Heatmap.CellSelected``), used by the trace,
  heatmap and lab screens.
* :mod:`tutor.widgets.heatmap_panel` — :class:`~tutor.widgets.heatmap_panel.HeatmapPanel`, several
  heatmaps of one source shown one at a time, with the source's errata underneath.
"""
