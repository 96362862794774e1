"""Command palette (ctrl+p): every lesson, trace, quiz mode, heatmap and lab experiment.

"Heatmap NAME" is offered only for a trace that has one (:mod:`tutor.heatmap.sources`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tutor.content import load_lessons
from tutor.lab.experiments import on_screen
from tutor.quiz.modes import MODE_TITLES
from tutor.screens.handle import tutor_app


class TutorCommands(Provider):
    """Commands built from the lessons, the trace registry, the quiz modes and the lab table."""

    async def startup(self) -> None:
        """Start building the traces' heatmaps in the background and return: a search must not
        wait for them (seconds of compiling on a first run; the warm-up builds them too), so
        each search offers the "Heatmap NAME" commands of the traces built so far."""
        from tutor.heatmap.sources import default_heatmaps  # deferred: loads numpy (start-up time)

        self.app.run_worker(default_heatmaps, thread=True, group="palette-heatmaps", exclusive=True)

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from engine.traces import list_traces  # deferred: loads numpy (start-up time)
        from tutor.heatmap.sources import built_heatmaps  # deferred: loads numpy (start-up time)
        from tutor.screens.home import AREAS  # deferred: loads textual (start-up time)

        app = tutor_app(self)
        with_maps = built_heatmaps()
        out: list[tuple[str, Callable[[], object], str]] = []
        for area in AREAS:
            out.append((f"Go to {area.title}", partial(app.action_open_mode, area.mode), area.blurb))
        for lesson in load_lessons():
            out.append((f"Lesson §{lesson.section}: {lesson.title}", partial(app.open_lesson, lesson.id),
                        lesson.summary))
        for info in list_traces():
            out.append((f"Trace {info.name}: {info.title}", partial(app.open_trace, info.name),
                        f"§{info.section} · {info.description}"))
            if info.name in with_maps:
                out.append((f"Heatmap {info.name}", partial(app.open_heatmap, info.name),
                            f"the attention weights of the {info.name} trace, with the cell cursor"))
        for mode, text in MODE_TITLES.items():
            out.append((f"Quiz: {text.split(' — ')[0]}", partial(app.open_quiz, mode=mode), text))
        for exp in on_screen():
            out.append((f"Lab: {exp.name}", partial(app.open_lab, exp.name), exp.blurb))
        for tab, title, blurb in (
                ("exam-paper", "Exam: timed paper", "structured questions, mark schemes, follow-through"),
                ("exam-sheet", "Exam: formula sheet", "every formula with its shapes, and the notation map"),
                ("exam-plan", "Exam: revision plan", "day by day to your exam date")):
            out.append((title, partial(app.open_exam, tab), blurb))
        return out

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            if title.startswith(("Go to", "Quiz:", "Lab:")):
                yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
