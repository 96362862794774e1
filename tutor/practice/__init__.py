"""The practice wing: the student does the steps of a worked example.

Plain modules, no terminal (the CLI's ``--practice --plain`` and the TUI's trace screen drive
them):

* :mod:`~tutor.practice.content` loads ``lessons/practice/<trace>.toml``: which values each
  step of a trace asks for, what hint 2 shows, and the step's self-explanation prompt.
* :mod:`~tutor.practice.levels`: fading levels (0 shows every value; each level blanks one
  more step from the end; the top level is the whole problem) and how a practice moves them.
* :mod:`~tutor.practice.answers` reads a typed value and marks it with
  :func:`engine.mistakes.diagnose`.
* :mod:`~tutor.practice.session` is the state machine both front ends drive; it saves each
  answer, the trace's level and its FSRS review. Its tasks (a blank, a why-question) and
  what answering gives back are the plain data of :mod:`~tutor.practice.tasks`.
* :mod:`~tutor.practice.report` holds the words both front ends show.
* :mod:`~tutor.practice.plain` is the line front end; :mod:`~tutor.practice.progress` the
  figures ``stats`` and the plan read.
"""
