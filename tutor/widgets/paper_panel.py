"""The paper tab: set up a timed paper, answer it part by part, see the marks.

It drives :class:`tutor.exam.session.PaperRun` exactly as ``attn-tutor paper --plain`` does,
with the same lines from :mod:`tutor.exam.render`; every string from the questions reaches
Textual as ``rich.text.Text`` (``[0.5, -0.2]`` is markup to Rich).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Button, Input, Label, SelectionList, Static, TextArea

from tutor.exam.render import feedback_lines, minutes, paper_header, part_lines, question_lines, result_lines
from tutor.render.safe import clean, text


def _text(lines: list[str], bold_first: bool = False) -> Text:
    """Lines of data (the paper's text, what the student wrote) as Text, without terminal control."""
    out = Text()
    for i, line in enumerate(lines):
        out.append(clean(line) + ("\n" if i < len(lines) - 1 else ""), "bold" if bold_first and i == 0 else "")
    return out


class PaperPanel(Vertical):
    """Setup → answer → (tick) → feedback → … → result, in one panel."""

    state: reactive[str] = reactive("setup")
    """setup | answer | tick | feedback | result"""

    def __init__(self, question_ids: tuple[str, ...] = (), minutes: float | None = None, **kw) -> None:
        super().__init__(**kw)
        self.question_ids = question_ids
        self.preset_minutes = minutes
        self.run = None
        self.result = None
        self._mark = None
        self._timer = None
        self._written = Text()

    def compose(self) -> ComposeResult:
        with Vertical(id="paper-setup"):
            yield Label("[b]A timed paper of structured questions[/b]")
            with Horizontal(classes="paper-row"):
                yield Label("Questions ")
                yield Input(str(len(self.question_ids) or 3), id="paper-count", type="integer",
                            disabled=bool(self.question_ids))
                yield Label("  Minutes (0 = untimed) ")
                yield Input("45" if self.preset_minutes is None else f"{self.preset_minutes:g}",
                            id="paper-minutes", type="number")
            yield Static(Text(("Questions: " + ", ".join(self.question_ids)) if self.question_ids
                              else "Unattempted questions first, from different sections."),
                         id="paper-choice")
            yield Static("", id="paper-setup-error", classes="field-error")
            yield Button("Start paper", variant="primary", id="paper-start")
        with Vertical(id="paper-run"):
            yield Static(id="paper-status")
            with VerticalScroll(id="paper-box"):
                yield Static(id="paper-question")
                yield Static(id="paper-part")
                yield Static(id="paper-feedback")
            yield Static("", id="paper-hint", classes="field-error")
            yield Input(placeholder="your answer, then Enter (empty = leave blank)", id="paper-answer")
            yield TextArea(id="paper-text")
            yield SelectionList(id="paper-points")
            with Horizontal(classes="paper-row"):
                yield Button("Submit", variant="primary", id="paper-submit")
                yield Button("Next", id="paper-next")
                yield Button("End paper", id="paper-end")
        with VerticalScroll(id="paper-result-box"):
            yield Static(id="paper-result")
            yield Button("Another paper", id="paper-again")

    def on_mount(self) -> None:
        self.watch_state(self.state)
        self.call_after_refresh(self.watch_state, self.state)  # focus once the tabs have settled

    def watch_state(self, state: str) -> None:
        self.query_one("#paper-setup").display = state == "setup"
        self.query_one("#paper-run").display = state in ("answer", "tick", "feedback")
        self.query_one("#paper-result-box").display = state == "result"
        part = self.run.current[1] if self.run is not None and self.run.current else None
        numeric = part is not None and part.kind == "numeric"
        self.query_one("#paper-answer").display = state == "answer" and numeric
        self.query_one("#paper-text").display = state == "answer" and not numeric
        self.query_one("#paper-points").display = state == "tick"
        self.query_one("#paper-submit").display = state in ("tick",) or (state == "answer" and not numeric)
        self.query_one("#paper-next").display = state == "feedback"
        self.screen.refresh_bindings()  # the screen's ctrl+s Submit shows only while a part is open
        self.focus_current()

    def focus_current(self) -> None:
        """Focus what the current state is used through (the answer box, Next, …)."""
        part = self.run.current[1] if self.run is not None and self.run.current else None
        focus = {"setup": "#paper-start", "tick": "#paper-points", "feedback": "#paper-next",
                 "result": "#paper-again"}.get(self.state)
        if self.state == "answer":
            focus = "#paper-answer" if part is not None and part.kind == "numeric" else "#paper-text"
        if focus and self.is_mounted:
            self.query_one(focus).focus()

    # ------------------------------------------------------------------ actions
    def on_button_pressed(self, event: Button.Pressed) -> None:
        handlers = {"paper-start": self.start, "paper-submit": self.submit,
                    "paper-next": self.next_part, "paper-end": lambda: self.finish("stopped"),
                    "paper-again": self.setup}
        if event.button.id in handlers:
            event.stop()
            handlers[event.button.id]()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "paper-answer":
            event.stop()
            self.submit()
        elif event.input.id in ("paper-count", "paper-minutes"):
            event.stop()
            self.start()

    def setup(self) -> None:
        self.run, self.result = None, None
        self.state = "setup"

    def start(self) -> None:
        from tutor.exam.paper import PaperError, make_paper
        from tutor.exam.session import PaperRun
        from tutor.store.papers import attempted_questions

        error = self.query_one("#paper-setup-error", Static)
        try:
            n = int(self.query_one("#paper-count", Input).value or 3)
            mins = float(self.query_one("#paper-minutes", Input).value or 45)
            if not 1 <= n <= 10 or not 0 <= mins <= 600:
                raise ValueError
        except ValueError:
            error.update(Text("Questions: 1 to 10; minutes: 0 (untimed) to 600."))
            return
        store = self.app.store  # type: ignore[attr-defined]
        try:
            paper = make_paper(n, mins or None, seed=_seed(), attempted=attempted_questions(store),
                               ids=self.question_ids)
        except PaperError as exc:
            error.update(text(exc))
            return
        error.update("")
        self.run = PaperRun(paper, store)
        self.run.start()
        self.query_one("#paper-question", Static).update(_text(paper_header(paper), bold_first=True))
        self._timer = self.set_interval(1.0, self._tick)
        self._show_part()

    def _show_part(self) -> None:
        cur = self.run.current
        if cur is None:
            self.finish(None)
            return
        q, part = cur
        number = self.run.paper.questions.index(q) + 1
        self.query_one("#paper-question", Static).update(_text(question_lines(q, number), bold_first=True))
        lines = part_lines(part)
        self.query_one("#paper-part", Static).update(_text(lines, bold_first=True))
        self.query_one("#paper-feedback", Static).update("")
        self.query_one("#paper-hint", Static).update("")
        self.query_one("#paper-answer", Input).value = ""
        self.query_one("#paper-text", TextArea).text = ""
        self._tick()
        self.state = "answer"
        self.call_after_refresh(self.query_one("#paper-part").scroll_visible, animate=False)

    def submit(self) -> None:
        from tutor.exam.marking import AnswerError
        from tutor.exam.render import scheme_lines

        if self.run is None or self.run.current is None:
            return
        _, part = self.run.current
        hint = self.query_one("#paper-hint", Static)
        if self.state == "answer" and part.kind == "text":
            points = self.query_one("#paper-points", SelectionList)
            points.clear_options()
            # one line per option (the full points are printed above, numbered alike)
            points.add_options([(text(f"{i}. {p}"), i - 1) for i, p in enumerate(part.spec.points, 1)])
            written = self.query_one("#paper-text", TextArea).text.strip() or "(nothing written)"
            self._written = _text(["Your answer: " + written, "", *scheme_lines(part),
                                   "Tick the points your answer makes (Space), then Submit (ctrl+s)."])
            self.query_one("#paper-feedback", Static).update(self._written)
            points.highlighted = 0
            self.state = "tick"
            self.call_after_refresh(self.query_one("#paper-box").scroll_end, animate=False)
            return
        try:
            if self.state == "tick":
                mark = self.run.answer(self.query_one("#paper-points", SelectionList).selected)
            else:
                mark = self.run.answer(self.query_one("#paper-answer", Input).value)
        except AnswerError as exc:
            hint.update(text(exc))
            return
        hint.update("")
        self._mark = mark
        before = self._written if self.state == "tick" else Text()
        lines = feedback_lines(part, mark)
        self.query_one("#paper-feedback", Static).update(
            Text.assemble(before, "\n\n" if str(before) else "", _text(lines, bold_first=True)))
        self.call_after_refresh(self.query_one("#paper-box").scroll_end, animate=False)
        self.state = "feedback"
        self._tick()

    def next_part(self) -> None:
        if self.run is not None and self.run.expired:
            self.finish("timed-out")
        else:
            self._show_part()

    def finish(self, status: str | None) -> None:
        if self.run is None or self.result is not None:
            return
        if self._timer is not None:
            self._timer.stop()
        self.result = self.run.finish(status)
        lines = result_lines(self.result)
        if self.result.status == "timed-out":
            lines.insert(0, "Time is up: the parts not answered count as blank.")
        self.query_one("#paper-result", Static).update(_text(lines, bold_first=True))
        self.state = "result"

    def _tick(self) -> None:
        if self.run is None or self.result is not None:
            return
        done, total = self.run.position
        left = self.run.remaining()
        number = done if self.state in ("feedback", "result") else done + 1  # the part on screen
        self.query_one("#paper-status", Static).update(Text(
            f"Part {max(1, min(number, total))} of {total} · time left {minutes(left)}", style="bold"))
        if self.run.expired:
            self.finish("timed-out")


def _seed() -> int:
    import random

    return random.SystemRandom().randrange(2**31)
