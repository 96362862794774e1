"""Exam revision: structured questions with mark schemes and follow-through marking, timed
papers, the formula sheet, a plan to the exam date, and export to Anki, Markdown and CSV.

Plain modules (no terminal): :mod:`.model` (question files), :mod:`.numbers` (engine-computed
numeric parts), :mod:`.paper` (questions for a seed, papers), :mod:`.marking`, :mod:`.session`
(one sitting), :mod:`.render` (the lines both front ends show), :mod:`.sheet`, :mod:`.plan`,
:mod:`.export`.
"""
