"""Command palette (ctrl+p): every lesson, trace, quiz mode, heatmap and lab experiment."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

QUIZ_MODES = (
    ("practice", "Practice — pick sections or topics"),
    ("review", "Review — cards due today (spaced repetition)"),
    ("weak", "Weak spots — lowest recall, most missed"),
    ("retry", "Retry incorrect — questions you last got wrong"),
    ("mock", "Mock exam — timed, scored per topic"),
)
LAB_EXPERIMENTS = (
    ("bottleneck", "fixed context vs attention as sequences grow"),
    ("teacher-forcing", "training with ratio 1.0 vs 0.0"),
    ("alignment", "the learned attention of a trained model as a heatmap"),
    ("scaling", "time and memory of plain vs tiled attention"),
    ("saturation", "Var(q·k) and softmax saturation against d_k"),
)


class TutorCommands(Provider):
    """Commands built from the lessons, the trace registry and the fixed mode lists."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from engine.traces import list_traces
        from tutor.content import load_lessons
        from tutor.screens.home import AREAS

        app = self.app
        out: list[tuple[str, Callable[[], object], str]] = []
        for area in AREAS:
            out.append((f"Go to {area.title}", partial(app.action_open_mode, area.mode), area.blurb))
        for lesson in load_lessons():
            out.append((f"Lesson §{lesson.section}: {lesson.title}", partial(app.open_lesson, lesson.id),
                        lesson.summary))
        for info in list_traces():
            out.append((f"Trace {info.name}: {info.title}", partial(app.open_trace, info.name),
                        f"§{info.section} · {info.description}"))
            out.append((f"Heatmap {info.name}", partial(app.open_heatmap, info.name),
                        f"the attention weights of the {info.name} trace, if it has any"))
        for mode, text in QUIZ_MODES:
            out.append((f"Quiz: {text.split(' — ')[0]}", partial(app.open_quiz, mode=mode), text))
        for name, text in LAB_EXPERIMENTS:
            out.append((f"Lab: {name}", partial(app.open_lab, name), text))
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
