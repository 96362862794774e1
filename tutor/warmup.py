"""Load (on a first run: compile) the engine's kernels in one background thread.

The TUI paints first, then starts a :class:`WarmUp`: one daemon thread that works through a
queue of *areas* — the kernels of one worked example (with its heatmaps), of the seq2seq lab,
of the Transformer lab, of the tiled attention — one tiny call each (:func:`areas`). With
numba's cache warm the whole queue loads in about a second; on the first run after installing
each kernel compiles once. numba compiles on one core, under a lock of its own, so one thread
is all a compile can use; what matters is the order, which follows the student: an area a
feature asks for (:meth:`WarmUp.wait_for`) jumps the queue, and the feature waits for it
rather than compile the same kernels beside the warm-up. The first thing the thread does is
import numba (through ``engine._jit``, under its lock), before any screen reaches the engine.

A lab experiment names the areas it needs as data (``kernels`` in
:mod:`tutor.lab.experiments`), and those it needs only after training (``later``); the
command-line lab runs the first in its own process with :func:`load` before its progress bars
start, and the others in a :class:`WarmUp` of its own while it trains.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterable

TRACE = "trace "
"""Prefix of a worked example's area: ``trace qkv``."""

SEQ2SEQ_LAB = "seq2seq lab"
TRANSFORMER_LAB = "transformer lab"
TRANSFORMER_SCORING = "transformer scoring"
"""The Transformer lab's scoring (greedy decoding, the heads): needed only once it has trained."""
TILED_ATTENTION = "tiled attention"

Report = Callable[[str, int, int], None]


def _engine_call(module: str, name: str, *args: object) -> Callable[[], object]:
    """``module.name(*args)``, the module imported (and the function looked up) when it runs."""
    return lambda: getattr(importlib.import_module(module), name)(*args)


def _trace(name: str) -> Callable[[], object]:
    """Load one worked example's kernels. On its defaults a worked example is tiny, so this
    builds it and keeps its heatmaps for the Heatmaps screen and the palette
    (:mod:`tutor.heatmap.sources`). A trace whose defaults are real work (``scaling``: a
    Monte Carlo over 5 × 10⁶ dot products, most of a second on a warm cache) runs the same
    kernels on the inputs that list it instead (:func:`engine.traces.build_for_listing`); its
    heatmaps are built by the screen that shows them."""
    def build() -> None:
        # deferred: numpy, not before the TUI's first paint (start-up budget 0.5 s)
        from engine.traces import build_for_listing, interpretable
        from tutor.heatmap.sources import build_heatmaps  # deferred: loads numpy, rich (start-up time)

        if interpretable(name):
            build_heatmaps(lambda n: n == name)
        else:
            build_for_listing(name)
    return build


def _tiled_attention() -> object:
    import numpy as np  # deferred: loads numpy (start-up time)

    from engine.flash import flash_attention  # deferred: loads numba (start-up time)

    x = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]], np.float32)   # float32, as the lab's
    return flash_attention(x, x, x)                                   # scaling uses it


def areas(first_trace: str = "qkv") -> dict[str, Callable[[], object]]:
    """Every warm-up area and its tiny call, in the default order: the worked examples
    (``first_trace``, the trace screen's first, then lecture order: the tour opens them
    before the lab), the two labs (the Transformer's training, then its scoring), then the
    tiled attention of the scaling lab."""
    from engine.traces import list_traces  # deferred: loads numpy (start-up time)

    names = [t.name for t in list_traces()]
    names.sort(key=lambda n: n != first_trace)                 # stable: lecture order after it
    calls: dict[str, Callable[[], object]] = {TRACE + n: _trace(n) for n in names}
    calls[SEQ2SEQ_LAB] = _engine_call("engine.lab", "warm_up")
    calls[TRANSFORMER_LAB] = _engine_call("engine.lab.transformer", "warm_up_training")
    calls[TRANSFORMER_SCORING] = _engine_call("engine.lab.transformer", "warm_up_scoring")
    calls[TILED_ATTENTION] = _tiled_attention
    return calls


def load(names: Iterable[str]) -> float:
    """Run the areas ``names`` here, in this thread (the CLI lab, or a TUI without a warm-up);
    returns the seconds it took. An unknown name is a bug and raises ``KeyError``."""
    t0 = time.perf_counter()
    calls = areas()
    for name in names:
        calls[name]()
    return time.perf_counter() - t0


def load_in_background(names: Iterable[str]) -> WarmUp:
    """Start a :class:`WarmUp` of the areas ``names`` alone (the command-line lab's scoring,
    while it trains) and return it. A feature that reaches a kernel first compiles it itself;
    numba's compile lock makes the other wait for it, not compile it again."""
    calls = areas()
    warm = WarmUp({name: calls[name] for name in names})
    warm.start()
    return warm


class WarmUp:
    """One background thread loading :func:`areas`, in queue order.

    Args:
        calls: area name → its tiny call, in the default order (:func:`areas`).
        report: ``report(name, done, total)`` before each area, from the thread; ``name`` is
            ``"done"`` at the end. Never blocks (the app posts a message).
    """

    def __init__(self, calls: dict[str, Callable[[], object]],
                 report: Report | None = None) -> None:
        self._calls = dict(calls)
        self._queue = list(calls)              # not started yet, in order
        self._done: set[str] = set()           # finished (or failed: the feature then calls
        self._cond = threading.Condition()     # the engine itself and sees the error)
        self._report = report
        self._stopped = False
        self._finished = False
        self.seconds: float | None = None      # the whole warm-up, once finished
        self._thread = threading.Thread(target=self._run, name="attn-tutor warm-up", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        from engine._jit import interpreted, numba  # deferred: loads the engine's kernels (start-up time)

        t0 = time.perf_counter()
        total = len(self._calls)
        try:
            if not interpreted():
                numba()                         # the engine's one import of numba, first
            while True:
                with self._cond:
                    if self._stopped or not self._queue:
                        break
                    name = self._queue.pop(0)
                    done = len(self._done)
                if self._report is not None:
                    self._report(name, done, total)
                try:
                    self._calls[name]()
                except Exception:  # noqa: BLE001 - the feature that needs it will say why
                    pass
                with self._cond:
                    self._done.add(name)
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._finished = True
                if not self._stopped:
                    self.seconds = time.perf_counter() - t0
                self._cond.notify_all()
        if self.seconds is not None and self._report is not None:
            self._report("done", total, total)

    def prefer(self, name: str) -> None:
        """Move the queued area ``name`` to the front (nothing if it started or is unknown)."""
        with self._cond:
            if name in self._queue:
                self._queue.remove(name)
                self._queue.insert(0, name)

    def wait_for(self, names: Iterable[str], should_stop: Callable[[], bool] | None = None,
                 then: Iterable[str] = ()) -> None:
        """Block until every area of ``names`` is loaded (they go to the front of the queue, in
        this order, and the areas ``then`` right after them, not waited for), the warm-up
        ends, or ``should_stop()``. Call it from a worker thread."""
        wanted = [n for n in names if n in self._calls]
        for name in [*reversed(list(then)), *reversed(wanted)]:
            self.prefer(name)
        with self._cond:
            while not (self._finished or all(n in self._done for n in wanted)):
                if should_stop is not None and should_stop():
                    return
                self._cond.wait(0.1)

    def stop(self) -> None:
        """Start no further area (the app is quitting); the one in hand runs to its end."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    @property
    def finished(self) -> bool:
        return self._finished
