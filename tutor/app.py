"""The Textual app: one app for lessons, traces, quizzes, heatmaps, the lab and progress.

Start-up is kept light: only the screen the app opens on is imported (the others, with numpy,
the quiz bank and the heatmap renderer behind them, load when first opened), the app paints
first, and only then starts the warm-up thread that loads (on a first run: compiles) the numba
kernels (see :mod:`tutor.warmup`), reporting in the home screen while it does — a warm-up
started earlier would compete with the first paint for the interpreter. A screen that needs
an area of the engine asks for it through :meth:`TutorApp.need_engine`.

An unexpected exception anywhere in the app (a screen callback, a worker) ends it the way the
command line does: one line on stderr naming the report file under the data folder's
``reports/``, and exit status 70 (:func:`run_app`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen

from tutor.errors import EXIT_INTERNAL, report_internal_error
from tutor.palette import TutorCommands
from tutor.render.safe import clean
from tutor.screens.help import HelpScreen, help_rows
from tutor.screens.home import AREAS, HomeScreen
from tutor.screens.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmallScreen
from tutor.store import open_store
from tutor.warmup import WarmUp, areas

if TYPE_CHECKING:
    from tutor.exam.paper import ExamStart
    from tutor.practice.tasks import PracticeStart
    from tutor.quiz.modes import QuizStart
    from tutor.screens.trace import TraceScreen
    from tutor.warmup import WarmUp

WARM_UP_AFTER = 0.3
"""Seconds between the first screen's refresh and the start of the kernel warm-up."""

SCREENS: dict[str, str] = {
    "learn": "tutor.screens.learn:LearnScreen",
    "trace": "tutor.screens.trace:TraceScreen",
    "heatmaps": "tutor.screens.heatmaps:HeatmapsScreen",
    "quiz": "tutor.screens.quiz:QuizScreen",
    "stats": "tutor.screens.stats:StatsScreen",
    "lab": "tutor.screens.lab:LabScreen",
    "exam": "tutor.screens.exam:ExamScreen",
}
"""Each area's screen class, imported when the area is first opened."""


def screen_class(mode: str) -> type[Screen]:
    """The screen class of area ``mode`` (imported now)."""
    module, _, name = SCREENS[mode].partition(":")
    return getattr(importlib.import_module(module), name)


def screen_factory(mode: str) -> Callable[..., Screen]:
    """:func:`screen_class`, to be called with that screen's own arguments."""
    return screen_class(mode)




@dataclass(frozen=True)
class StartAt:
    """Where the app opens: a mode, an optional item (lesson id, trace name, experiment…) and
    what that mode's screen should start with.

    Attributes:
        trace_inputs: the trace screen's inputs (``attn-tutor trace NAME --set …``).
        quiz: the quiz to set up or start (``attn-tutor quiz`` on a terminal); None: the quiz
            screen's own defaults.
        lab_settings: experiment name → the settings its run takes (tests make runs tiny).
        exam: the paper to preset on the Exam screen (``attn-tutor paper`` on a terminal);
            None: the exam screen's own defaults.
    """

    mode: str = "home"
    item: str | None = None
    trace_inputs: Mapping[str, Any] = field(default_factory=dict)
    quiz: QuizStart | None = None
    lab_settings: Mapping[str, Any] = field(default_factory=dict)
    exam: ExamStart | None = None
    practice: PracticeStart | None = None
    """Start a practice on the trace screen (``attn-tutor trace NAME --practice``)."""


class EngineStatus(Message):
    """The warm-up's progress line, posted from its worker thread."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class TutorApp(App):
    """attn-tutor's full-screen interface."""

    TITLE = "attn-tutor"
    SUB_TITLE = "attention mechanisms, step by step"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    COMMANDS = App.COMMANDS | {lambda: _palette()}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("f1", "help", "Help"),  # also while typing an answer, where ? is a character
        Binding("0", "open_mode('home')", "Home", show=False),
        *(Binding(a.key, f"open_mode('{a.mode}')", a.title, show=False) for a in AREAS),
        Binding("ctrl+q", "quit", "Quit"),
    ]
    HELP_WORDS = {"open_mode": "Go to an area: 0 Home · " + " · ".join(f"{a.key} {a.title}" for a in AREAS)}

    def __init__(self, start: StartAt | None = None, *, warm_up: bool = True) -> None:
        self.start = start or StartAt()
        # the first screen is the start mode's own: Textual builds it when the app composes,
        # with no blank default screen to switch away from (each switch re-parses all CSS)
        # (Textual reads the attribute from the instance; typeshed-style it is a ClassVar)
        self.DEFAULT_MODE = (  # type: ignore[misc]
            self.start.mode if self.start.mode in {a.mode for a in AREAS} else "home")
        super().__init__()
        self._warm_up = warm_up
        self._warmer: WarmUp | None = None  # the warm-up thread, once started
        self.crash: BaseException | None = None  # an unexpected exception that ended the app
        self.engine_status = "Engine: starting…"
        self._store = None
        self._too_small: TooSmallScreen | None = None
        # NO_COLOR: Textual itself reads it and draws every colour as a grey of the same
        # lightness (its Monochrome filter). The theme stays the default on purpose: an ANSI
        # theme under that filter paints text and background the same black (test_tui_keys).
        self.mode_factories: dict[str, Callable[[], Screen]] = {
            "home": HomeScreen,
            "learn": lambda: screen_factory("learn")(self._start_item("learn")),
            "trace": lambda: screen_factory("trace")(self._start_item("trace"),
                                                   self._started_in("trace").trace_inputs,
                                                   practice=self._started_in("trace").practice),
            "heatmaps": lambda: screen_factory("heatmaps")(self._start_item("heatmaps")),
            "quiz": self._quiz_screen,
            "stats": lambda: screen_factory("stats")(),
            "lab": lambda: screen_factory("lab")(self._start_item("lab"),
                                               self._started_in("lab").lab_settings),
            "exam": self._exam_screen,
        }
        for mode, factory in self.mode_factories.items():
            self.add_mode(mode, factory)

    def _quiz_screen(self) -> Screen:
        start, quiz_screen = self._started_in("quiz").quiz, screen_factory("quiz")
        return quiz_screen(start) if start is not None else quiz_screen()

    def _exam_screen(self) -> Screen:
        start, exam_screen = self._started_in("exam").exam, screen_factory("exam")
        return exam_screen(start) if start is not None else exam_screen()

    def _start_item(self, mode: str) -> str | None:
        """The item the command line asked for, if the app was started in ``mode``."""
        return self.start.item if self.start.mode == mode else None

    def _started_in(self, mode: str) -> StartAt:
        """The start options when the app was started in ``mode``; the defaults otherwise."""
        return self.start if self.start.mode == mode else StartAt(mode)

    # -- start-up -------------------------------------------------------------------
    def on_mount(self) -> None:
        self.call_after_refresh(lambda: self._check_size(*self.size))  # started in a small window
        if self._warm_up:  # once that screen is on the terminal (its frames are written by a thread)
            self.call_after_refresh(lambda: self.set_timer(WARM_UP_AFTER, self.warm_up))

    def warm_up(self) -> None:
        """Start the warm-up thread (once): every engine area, in :func:`tutor.warmup.areas`
        order, progress on the home screen."""
        if self._warmer is not None:
            return

        def report(name: str, done: int, total: int) -> None:
            if name == "done":
                seconds = self._warmer.seconds if self._warmer is not None else None
                text = ("Engine: ready." if seconds is None
                        else f"Engine: ready ({seconds:.1f} s to warm up).")
            else:
                text = (f"Engine: preparing the math kernels ({done}/{total}: {name})… "
                        "the first run after installing compiles them once.")
            self.post_message(EngineStatus(text))  # thread-safe and never blocks (quitting)

        self._warmer = WarmUp(areas(), report)
        self._warmer.start()

    def need_engine(self, areas: Sequence[str], should_stop: Callable[[], bool] | None = None,
                    then: Sequence[str] = ()) -> None:
        """From a worker: wait until the warm-up has loaded ``areas`` (names of
        :func:`tutor.warmup.areas`), which jump its queue (``then`` queued right after them,
        not waited for); without a warm-up (tests, or before it starts) return at once and
        let the caller load them itself."""
        if self._warmer is not None:
            self._warmer.wait_for(areas, should_stop, then)

    # -- unexpected exceptions ------------------------------------------------------
    def _handle_exception(self, error: Exception) -> None:
        """Textual's one door for an exception nothing handled (a message handler, a screen
        callback, a worker): keep it for :func:`run_app`'s report, then let Textual end the
        app (a Pilot test still sees the exception)."""
        if self.crash is None:
            self.crash = getattr(error, "error", None) if type(error).__name__ == "WorkerFailed" else error
            self.crash = self.crash or error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        """End the app without printing Textual's traceback (a screenful with locals): the
        student gets one line and the report file instead (:func:`run_app`)."""
        self._close_messages_no_wait()

    def on_engine_status(self, message: EngineStatus) -> None:
        self._set_engine_status(message.text)

    def _set_engine_status(self, text: str) -> None:
        self.engine_status = text
        for screen in self.screen_stack:
            if isinstance(screen, HomeScreen):
                screen.update_engine_status(text)

    # -- progress store -------------------------------------------------------------
    @property
    def store(self):
        """The progress store, opened on first use; its warnings are shown once."""
        if self._store is None:
            self._store = open_store()
            for message in self._store.warnings:
                self.notify(message, severity="warning", timeout=10)
        return self._store

    def lessons_opened(self) -> set[str]:
        try:
            return set(self.store.lessons_opened())
        except Exception as exc:  # noqa: BLE001 - progress marks must never break reading
            self.notify(f"could not read progress: {exc}", severity="warning")
            return set()

    def mark_lesson_opened(self, lesson_id: str) -> bool:
        """Record that a lesson was read; True when it is the first time."""
        try:
            first = lesson_id not in self.store.lessons_opened()
            self.store.mark_lesson_opened(lesson_id)
            return first
        except Exception as exc:  # noqa: BLE001
            self.notify(f"could not save progress: {exc}", severity="warning")
            return False

    def on_unmount(self) -> None:
        if self._warmer is not None:  # quitting: no further area starts
            self._warmer.stop()
        if self._store is not None:
            self._store.close()

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast, from every screen (``Screen.notify`` comes here): messages carry data
        (paths, names, store errors), so they are shown as they are and without terminal
        control; ``markup`` is ignored (no toast of ours is styled)."""
        super().notify(clean(message), title=clean(title), severity=severity, timeout=timeout, markup=False)

    # -- navigation -----------------------------------------------------------------
    def _then(self, mode: str, call: Callable[[Any], None]) -> None:
        """Switch to ``mode``, then (once it is showing) ``call(screen)`` if it is that area's."""
        self.switch_mode(mode)

        def later() -> None:
            if isinstance(self.screen, screen_class(mode)):
                call(self.screen)

        self.call_after_refresh(later)

    def open_trace(self, name: str, overrides: Mapping[str, Any] | None = None) -> None:
        """Switch to the trace screen showing ``name`` (on ``overrides``, when given)."""

        def load(screen: TraceScreen) -> None:
            if screen.trace_name != name or overrides or screen.trace is None:
                screen.load(name, dict(overrides or {}))

        self._then("trace", load)

    def open_lesson(self, lesson_id: str) -> None:
        """Switch to the learn screen on ``lesson_id``."""
        self._then("learn", lambda screen: screen.show(lesson_id))

    def open_quiz(self, topics: tuple[str, ...] = (), mode: str = "practice") -> None:
        """Switch to the quiz screen, preset to ``mode`` and ``topics``."""
        self._then("quiz", lambda screen: screen.preset(tuple(topics), mode))

    def open_lab(self, experiment: str) -> None:
        """Switch to the lab screen with ``experiment`` selected."""
        self._then("lab", lambda screen: screen.select(experiment))

    def open_exam(self, tab: str = "exam-paper") -> None:
        """Switch to the exam screen on ``tab`` (exam-paper, exam-sheet or exam-plan)."""
        self._then("exam", lambda screen: screen.show_tab(tab))

    def open_heatmap(self, trace_name: str) -> None:
        """Switch to the heatmaps screen on ``trace_name``'s weights."""

        self._then("heatmaps", lambda screen: screen.ask_for(trace_name))

    def show_heatmaps(self, source: str, heatmaps: Sequence[Any]) -> None:
        """Switch to the heatmaps screen and add ``heatmaps`` (e.g. a lab run's) as ``source``."""
        self._then("heatmaps", lambda screen: screen.add_source(source, list(heatmaps)))

    def action_open_mode(self, mode: str) -> None:
        self.switch_mode(mode)

    def action_help(self) -> None:
        """The keys of the screen on top, each once (:func:`tutor.screens.help.help_rows`)."""
        screen = self.screen
        if isinstance(screen, HelpScreen):
            return
        rows = help_rows(self, screen)
        if not screen.is_modal:
            rows.append(("^p", "Command palette: every lesson, trace, quiz mode and lab run"))
        title = type(screen).__name__.removesuffix("Screen").removesuffix("Modal")  # HeatmapModal: "Heatmap"
        self.push_screen(HelpScreen(title or "Home", rows))

    # -- size guard -----------------------------------------------------------------
    def on_resize(self, event: Resize) -> None:
        self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        too_small = width < MIN_WIDTH or height < MIN_HEIGHT
        showing = self._too_small is not None and self.screen is self._too_small
        if too_small and not showing:
            self._too_small = TooSmallScreen()
            self.push_screen(self._too_small)
        elif too_small and self._too_small is not None:  # showing it already
            self._too_small.refresh_message()
        elif showing:
            self.pop_screen()
            self._too_small = None


def _palette():
    return TutorCommands


def make_app(start: StartAt | None = None, *, warm_up: bool = True) -> TutorApp:
    """The app factory shared by the CLI and the tests (snapshots turn the timed warm-up off)."""
    return TutorApp(start, warm_up=warm_up)


def run_app(start: StartAt | None = None) -> None:
    """Run the TUI in the current terminal. An unexpected exception ends it as a bug does on
    the command line: its traceback goes to a report file, one line names it on stderr, and
    the process exits with status 70 (``tutor.errors.EXIT_INTERNAL``)."""
    app = make_app(start)
    app.run()
    if app.crash is not None:
        print(report_internal_error(app.crash), file=sys.stderr)
        raise SystemExit(EXIT_INTERNAL)
