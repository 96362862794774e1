"""Running an experiment: the stop flag, the words for a progress event, and the terminal's
progress bars and Ctrl-C handling.

Every experiment reports through one event type (:class:`engine.lab.ProgressEvent`) and
stops through one flag (:class:`StopFlag`, which is the ``should_stop`` callable). The TUI
sets the flag from its cancel key; the CLI from Ctrl-C (:class:`CtrlC`). Both word an event
with :func:`event_status`. The TUI collects events in a :class:`LiveProgress`, which the
training threads fill without ever waiting for the screen.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tutor.warmup import load


class StopFlag:
    """Set once to ask a run to stop after its current step; call it to ask whether it is set.

    Thread-safe (a :class:`threading.Event`): the UI sets it, the training threads poll it.
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()

    __call__ = is_set


@dataclass(frozen=True)
class LiveView:
    """What a running experiment has reported, as of one look.

    Attributes:
        latest: each run's newest event (older ones nobody looked at were replaced).
        losses: each run's training loss points (step, loss per token), oldest first.
        points: how many loss points there are in all (changes when ``losses`` does).
    """

    latest: dict[str, Any]
    losses: dict[str, list[tuple[int, float]]]
    points: int


class LiveProgress:
    """A run's progress events, collected for a screen that looks a few times a second.

    :meth:`callback` is the experiment's ``on_progress``, called on the training threads: it
    never waits for the screen, keeps every loss point, and keeps only the newest event of each
    run — a newer event replaces an older one the screen has not looked at yet (as toolong's
    messages ``can_replace`` each other). :meth:`take` (on the UI thread) returns what is new
    since the last look, or None when nothing is, so an idle look costs nothing.
    """

    def __init__(self, bars: int = 1) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, Any] = {}
        self._losses: dict[str, list[tuple[int, float]]] = {}
        self._points = 0
        self._new = False
        self.bars = bars
        """Progress bars the experiment has (runs whose steps add up to the whole)."""

    def callback(self, event: Any) -> None:
        with self._lock:
            if event.phase == "train" and event.loss is not None:
                self._losses.setdefault(event.run, []).append((event.step, event.loss))
                self._points += 1
            self._latest[event.run] = event
            self._new = True

    def take(self) -> LiveView | None:
        """What changed since the last call (None: nothing did)."""
        with self._lock:
            if not self._new:
                return None
            self._new = False
            return self._view()

    def view(self) -> LiveView:
        """Everything so far (whether or not it was taken)."""
        with self._lock:
            return self._view()

    def _view(self) -> LiveView:
        return LiveView(dict(self._latest), {run: list(pts) for run, pts in self._losses.items()},
                        self._points)


def event_status(event: Any) -> str:
    """A few words for what an event says: ``loss 0.123/token``, ``evaluating…``, ``n = 1024``."""
    if event.phase == "train":
        return f"loss {event.loss:.3f}/token" if event.loss is not None else ""
    if event.phase == "evaluate":
        return "evaluating…"
    if event.phase == "measure":
        return event.message
    return "done" if event.step >= event.total else "stopped"


# ---------------------------------------------------------------------------- the terminal


class CtrlC:
    """First Ctrl-C sets ``flag`` (the run stops after its current step); a second aborts."""

    def __init__(self, flag: StopFlag | None = None) -> None:
        self.flag = flag or StopFlag()
        self._old: Any = None  # the SIGINT handler this replaced (signal.signal's own type)

    def __enter__(self) -> StopFlag:
        if threading.current_thread() is threading.main_thread():  # signals only work there
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self.flag

    def _handle(self, signum: int, frame: object) -> None:
        if self.flag.is_set():
            raise KeyboardInterrupt
        self.flag.set()
        print("\nattn-tutor: stopping after the current step (Ctrl-C again to abort)…",
              file=sys.stderr)

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


class TerminalProgress:
    """Rich progress bars on stderr, one per run; ``callback`` takes the engine's events
    (safe to call from the training threads). Disabled: every call does nothing."""

    def __init__(self, runs: Sequence[str], total: int, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._ids: dict[str, Any] = {}
        self._runs = list(runs)
        self._total = total
        self._progress: Any = None

    def __enter__(self) -> TerminalProgress:
        if not self.enabled:
            return self
        from rich.console import Console  # deferred: loads rich (start-up time)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )  # deferred: loads rich (start-up time)

        self._progress = Progress(
            TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=False,
        )
        self._progress.__enter__()
        for run in self._runs:
            self._ids[run] = self._progress.add_task(run, total=self._total, status="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def callback(self, event: Any) -> None:
        if self._progress is None:
            return
        with self._lock:
            task = self._ids.get(event.run)
            if task is None:
                task = self._ids[event.run] = self._progress.add_task(event.run, total=event.total,
                                                                      status="")
            self._progress.update(task, completed=event.step, total=event.total,
                                  status=event_status(event))


def progress_enabled() -> bool:
    """Progress bars go to stderr, and only when it is a real terminal."""
    return sys.stderr.isatty() and os.environ.get("TERM", "") != "dumb"


LOADING = "loading the lab's numba kernels (a first run compiles them once)"
"""Short enough for the spinner, the text and the seconds elapsed on one 80-column line."""


def warm_up_kernels(spinner: bool, *, quiet_for: float = 1.0,
                    say: Callable[[str], None] | None = None,
                    areas: Sequence[str] = ("seq2seq lab",)) -> float:
    """Load an experiment's kernels (the warm-up ``areas`` of :func:`tutor.warmup.areas`; the
    seq2seq lab's by default) in this process before the progress bars start (a first run
    compiles them); returns the seconds it took.

    On a terminal (``spinner``) a spinner with the seconds elapsed says so from the start;
    otherwise ``say`` (default: a line on stderr) says it once the load has taken ``quiet_for``
    seconds (a cached load is faster and stays silent), so a log never shows a silent pause.
    A Ctrl-C meanwhile is kept by the caller's handler: the run then stops at its first step.
    """
    t0 = time.perf_counter()
    if spinner:
        from rich.console import Console  # deferred: loads rich (start-up time)

        # deferred: loads rich (start-up time)
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True) as progress:
            progress.add_task(LOADING + "…", total=None)
            load(areas)
        return time.perf_counter() - t0
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    notice = threading.Timer(quiet_for, say, [f"attn-tutor: {LOADING}…"])
    notice.daemon = True
    notice.start()
    try:
        load(areas)
    finally:
        notice.cancel()
    return time.perf_counter() - t0
