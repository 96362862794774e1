"""The one progress protocol of every lab experiment (training and measurements alike).

An experiment takes two optional callbacks:

- ``on_progress(ProgressEvent)``: called now and then (possibly from a worker thread);
- ``should_stop() -> bool``: polled between steps; True ends the run early, and the result
  then says so (``interrupted`` for training runs, ``stopped`` for measurements) and holds
  what was finished.

Nothing here prints: the CLI draws the events as Rich progress bars, the TUI as its own bar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ProgressEvent:
    """A progress report from a running experiment.

    Attributes:
        experiment: the experiment's name (``"bottleneck"``, ``"scaling"``, ...).
        run: which part of it: a model (``"attention"``, ``"fixed"``, ``"ratio 1"``) or, for
            a measurement, the experiment's name again.
        phase: ``"train"``, ``"evaluate"``, ``"measure"`` or ``"done"``.
        step: steps done (of ``total``): training steps, or measured points.
        total: steps planned.
        loss: mean cross-entropy per target token over the last few steps (None if none).
        elapsed: seconds since this run started.
        message: what is happening now, in a few words (``"n = 1024"``); may be empty.
    """

    experiment: str
    run: str
    phase: str
    step: int
    total: int
    loss: float | None = None
    elapsed: float = 0.0
    message: str = ""

    @property
    def fraction(self) -> float:
        """``step / total`` in [0, 1] (1 when nothing was planned)."""
        return min(1.0, self.step / self.total) if self.total > 0 else 1.0


ProgressFn = Callable[[ProgressEvent], None]
StopFn = Callable[[], bool]
