"""Every renderer of data, in one place (so escaping and parity checks have one home).

- traces: :mod:`~tutor.render.rich_view` (Rich: the terminal and the TUI's trace screen),
  :mod:`~tutor.render.plain` (``--plain``), :mod:`~tutor.render.markdown` (``--markdown``),
  :mod:`~tutor.render.catalog` (JSON, the trace and input listings), shared helpers in
  :mod:`~tutor.render.text`;
- lessons: :mod:`~tutor.render.documents` (lessons, exam cards and Q&A as Markdown) and
  :mod:`~tutor.render.lesson` (Markdown as plain text);
- progress: :mod:`~tutor.render.stats` (text and Rich);
- small formats: :mod:`~tutor.render.numbers` (percent, clock, bars).

None computes anything. Heatmaps (:mod:`tutor.heatmap`) and lab reports
(:mod:`tutor.lab.report`) have their own packages next to the data they draw.
"""
