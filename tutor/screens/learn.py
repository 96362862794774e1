"""Learn screen: the lessons (the twelve sections, then the Transformer) with progress marks,
rendered as Markdown.

From a lesson, one key opens its trace (t), its quiz topic (z) or its heatmap (h, shown only
for a lesson that has one). The last entries of the sidebar are the exam revision cards, the
exam guidance and the students' Q&A. A lesson counts as read once its end has been on screen
(scrolled to, or there from the start when it fits).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from tutor.content import load_lessons
from tutor.render.documents import exam_document, lesson_document, qa_document
from tutor.render.labels import hanging
from tutor.render.safe import assemble
from tutor.screens.handle import tutor_app

SETTLE_S = 0.12
END_SLACK = 1
"""Lines from the bottom that still count as the end (a last blank line, a rounding)."""
EXTRA_PAGES = (("exam", "Exam revision cards + guidance"), ("qa", "All students' questions"))


class LearnScreen(Screen):
    """Read a lesson; jump to its trace, quiz or heatmap."""

    BINDINGS = [
        Binding("t", "open_trace", "Trace"),
        Binding("z", "open_quiz", "Quiz topic"),
        Binding("h", "open_heatmap", "Heatmap"),
        Binding("right_square_bracket", "step(1)", "Next lesson", key_display="]"),
        Binding("left_square_bracket", "step(-1)", "Prev lesson", key_display="["),
    ]
    HELP_WORDS = {"step": "Previous / next lesson"}

    def __init__(self, lesson_id: str | None = None) -> None:
        super().__init__()
        self.lesson_id = lesson_id
        self.page_id: str | None = None
        self.document = ""
        self._pending: Timer | None = None
        self._read: set[str] = set()  # marked during this visit: scrolling on does not re-save

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="learn-main"):
            yield OptionList(id="learn-list")
            with VerticalScroll(id="learn-scroll"):
                yield Static(id="learn-doc")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.lessons = {lesson.id: lesson for lesson in load_lessons()}
        self.refresh_list()
        self.watch(self.query_one("#learn-scroll", VerticalScroll), "scroll_y", self._scrolled, init=False)
        self.show(self.lesson_id or next(iter(self.lessons)))
        self.query_one("#learn-list", OptionList).focus()

    def refresh_list(self) -> None:
        opened = tutor_app(self).lessons_opened()
        options = self.query_one("#learn-list", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        for lesson in self.lessons.values():
            mark = ("✓", "green") if lesson.id in opened else ("·", "dim")
            head = assemble(mark, f" §{lesson.section}")
            options.add_option(Option(hanging(head, lesson.title, head_width=5), id=lesson.id))
        options.add_option(None)
        for page_id, title in EXTRA_PAGES:
            options.add_option(Option(hanging("", title, head_width=5, title_style="bold"), id=page_id))
        if highlighted is not None:
            options.highlighted = highlighted

    def show(self, page_id: str) -> None:
        if page_id == self.page_id:
            return
        self.page_id = page_id
        if page_id in self.lessons:
            lesson = self.lessons[page_id]
            self.lesson_id = page_id
            text = lesson_document(lesson, keys=True)
        else:
            text = exam_document() if page_id == "exam" else qa_document()
        from rich.markdown import Markdown  # deferred: loads markdown_it (start-up time)

        self.document = text
        self.query_one("#learn-doc", Static).update(Markdown(text, code_theme="ansi_dark", hyperlinks=False))
        self.query_one("#learn-scroll", VerticalScroll).scroll_home(animate=False)
        options = self.query_one("#learn-list", OptionList)
        index = options.get_option_index(page_id)
        if options.highlighted != index:
            options.highlighted = index
        self.refresh_bindings()  # `h` only for a lesson with a heatmap
        self.call_after_refresh(self._check_end)  # a lesson that fits is read at once

    # -- read marks -------------------------------------------------------------------
    def _scrolled(self, _old: float, _new: float) -> None:
        self._check_end()

    def _check_end(self) -> None:
        """Mark the lesson on screen read when the bottom of its text is in view."""
        scroll = self.query_one("#learn-scroll", VerticalScroll)
        doc = self.query_one("#learn-doc", Static)
        if self.page_id not in self.lessons or doc.size.height == 0:
            return  # not laid out yet: the next scroll or refresh asks again
        if scroll.scroll_y + END_SLACK >= scroll.max_scroll_y:
            self._mark_read(self.page_id)

    def _mark_read(self, lesson_id: str) -> None:
        if lesson_id in self._read or self.lesson_id != lesson_id:
            return
        self._read.add(lesson_id)
        if tutor_app(self).mark_lesson_opened(lesson_id):
            self.refresh_list()
            self.notify(f"Lesson {self.lessons[lesson_id].section} marked as read.", timeout=3)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # render once the cursor settles, so holding ↓ does not queue up a dozen renders
        if self._pending is not None:
            self._pending.stop()
        if event.option_index != event.option_list.highlighted:
            return  # a stale event from an earlier highlight
        if event.option.id:
            page_id = event.option.id
            self._pending = self.set_timer(SETTLE_S, lambda: self._settled(page_id))

    def _settled(self, page_id: str) -> None:
        """Show ``page_id`` if the cursor is still on it (a key may have moved it since)."""
        options = self.query_one("#learn-list", OptionList)
        current = options.highlighted
        if current is not None and options.get_option_at_index(current).id == page_id:
            self.show(page_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#learn-scroll", VerticalScroll).focus()

    # -- jumps ------------------------------------------------------------------------
    @property
    def lesson(self):
        return self.lessons.get(self.lesson_id or "")

    def action_step(self, delta: int) -> None:
        ids = list(self.lessons)
        current = ids.index(self.lesson_id) if self.lesson_id in ids else 0
        self.show(ids[(current + delta) % len(ids)])

    def action_open_trace(self) -> None:
        if self.lesson and self.lesson.traces:
            tutor_app(self).open_trace(self.lesson.traces[0])

    def action_open_quiz(self) -> None:
        if self.lesson:
            tutor_app(self).open_quiz(topics=(self.lesson.quiz_topic,))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_heatmap":  # hidden where the lesson has no heatmap
            return self.lesson is not None and self.page_id == self.lesson_id and bool(self.lesson.heatmaps)
        if action in ("open_trace", "open_quiz"):
            return self.lesson is not None and self.page_id == self.lesson_id and (
                action == "open_quiz" or bool(self.lesson.traces))
        return True

    def action_open_heatmap(self) -> None:
        if self.lesson and self.lesson.heatmaps:
            tutor_app(self).open_heatmap(self.lesson.heatmaps[0])
        else:
            self.notify("This lesson has no heatmap.", severity="warning")
