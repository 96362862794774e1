"""The home screen: where each part of the tutor lives, and how ready the engine is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from tutor.content import LESSON_IDS
from tutor.exam.plan import plan_from_store, saved_exam, today_lines
from tutor.render.safe import assemble
from tutor.screens.handle import tutor_app
from tutor.store.papers import attempted_questions


@dataclass(frozen=True)
class Area:
    """One part of the tutor reachable from home (and by its number key everywhere)."""

    mode: str
    key: str
    title: str
    blurb: str


AREAS: tuple[Area, ...] = (
    Area("learn", "1", "Learn", "A lesson per section of the lecture, one on the Transformer, and the exam "
                                "cards."),
    Area("trace", "2", "Trace", "Every worked example, one step at a time — then with your own numbers."),
    Area("quiz", "3", "Quiz", "Spaced-repetition revision, generated problems and timed mock exams."),
    Area("heatmaps", "4", "Heatmaps", "Attention weights drawn as heatmaps, with a cell cursor."),
    Area("lab", "5", "Lab", "Train a tiny seq2seq or Transformer; watch the bottleneck, alignments, heads."),
    Area("stats", "6", "Stats", "Due cards, mastery per topic and your mock-exam history."),
    Area("exam", "7", "Exam", "Timed papers with mark schemes, the formula sheet, and a plan to your exam "
                              "date."),
)


class HomeScreen(Screen):
    """Start here: pick an area with Enter or its number key."""

    BINDINGS = [Binding("enter", "open_selected", "Open", show=False)]

    _shown = False  # progress shown once (the first time only after the first frame)
    _pending = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="home-body"):
            with Vertical(id="home-menu"):
                yield Static(
                    "[b]attn-tutor[/b]\n[dim]attention mechanisms, step by step[/dim]", id="home-title"
                )
                yield OptionList(
                    *(Option(assemble((a.key, "bold"), f"  {a.title}"), id=a.mode) for a in AREAS),
                    id="home-options",
                )
            with Vertical(id="home-detail"):
                yield Static(id="home-blurb")
                yield Static(id="home-progress")
                yield Static(id="home-plan")
                yield Static(id="engine-status")
        yield Footer(compact=True)

    def on_screen_resume(self) -> None:
        # the warm-up's progress changed while another area was open (each area is its own
        # screen stack, so the app's updates could not reach this screen meanwhile)
        self.update_engine_status(tutor_app(self).engine_status)
        if self._shown:
            self._show_progress()
        elif not self._pending:  # the app's first frame: the menu first, the progress store after
            self._pending = True
            self.call_after_refresh(self._show_progress)

    def _show_progress(self) -> None:
        """Lessons read, cards due, today's plan (these open the progress store)."""
        self._shown = True
        self.query_one("#home-progress", Static).update(self.progress_line())
        self.query_one("#home-plan", Static).update(self.plan_text())
        for notice in tutor_app(self).store.take_notices():
            self.notify(notice, severity="warning", timeout=10)  # rows progress_line skipped

    def progress_line(self) -> Text:
        """Where the student stands: lessons read, cards due now."""
        try:
            store = tutor_app(self).store
            opened = len(store.lessons_opened())
            due = len(store.due_cards())
        except Exception as exc:  # noqa: BLE001 - home must paint even if progress cannot be read
            return assemble((f"Progress unavailable: {exc}", "dim"))
        due_text = (
            ((str(due), "bold"), f" card{'s' * (due != 1)} due for review (key 3)")
            if due
            else ("no cards due",)
        )

        return assemble("Lessons read: ", (str(opened), "bold"), f"/{len(LESSON_IDS)} · ", *due_text)

    def plan_text(self):
        """Today's part of the revision plan, or how to make one (key 7 → Plan)."""
        try:
            store = tutor_app(self).store
            saved = saved_exam(store)
            if saved is None or saved[0] <= date.today():
                return Text("No exam date set: Exam (key 7) → Plan makes a day-by-day plan to it.",
                            style="dim")
            plan = plan_from_store(store, saved[0], date.today(), saved[1],
                                   attempted=attempted_questions(store))
        except Exception as exc:  # noqa: BLE001 - home must paint even if the plan cannot be made
            return Text(f"Plan unavailable: {exc}", style="dim")
        return Text("\n".join(today_lines(plan)))

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0
        self._show_blurb(AREAS[0])
        self.update_engine_status(tutor_app(self).engine_status)

    def _show_blurb(self, area: Area) -> None:
        self.query_one("#home-blurb", Static).update(
            assemble((area.title, "bold"), (f"  (key {area.key})", "dim"), "\n\n", area.blurb))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_blurb(next(a for a in AREAS if a.mode == event.option.id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:  # every area's option has its mode as id
            tutor_app(self).action_open_mode(event.option.id)

    def update_engine_status(self, status: str) -> None:
        self.query_one("#engine-status", Static).update(assemble(status))
