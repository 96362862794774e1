"""The lab wing: everything an experiment computes, reports and saves, once.

The CLI (``tutor/commands/lab.py``) parses options into an experiment's settings and hands
them to :func:`tutor.lab.run.run_in_terminal`; the TUI's lab screen runs the same
:class:`~tutor.lab.experiments.Experiment` in a worker and shows the same report.

- :mod:`tutor.lab.experiments` — the table of experiments (and how to add one);
- :mod:`tutor.lab.progress` — the stop flag, progress-event wording, terminal bars, Ctrl-C;
- :mod:`tutor.lab.report` — report parts (sentences, tables, plots) and how to show them;
- :mod:`tutor.lab.jsonout` — the pieces of ``--json``; :mod:`tutor.lab.files` — weights and
  heatmap files;
- one module per experiment: ``bottleneck``, ``teacher_forcing``, ``alignment``, ``train``,
  ``scaling``, ``saturation``.
"""
