"""The lab's experiments: one table the CLI (``attn-tutor lab NAME``), the TUI lab screen and
the command palette all read.

Adding an experiment is one row here plus its module ``tutor/lab/<name>.py``. The row may
name the engine's settings class and experiment function (``"module:name"``); then running
is ``function(settings_class(), on_progress=…, should_stop=…)`` and the module need not say
more about it. The module defines:

- ``describe(settings)`` → one line saying what will run (none when it is missing);
- ``bars(settings)`` → (progress-bar names, steps per bar) for the terminal;
- ``report(result, settings, style)`` → parts (:mod:`tutor.lab.report`): the sentences,
  tables and plots both front ends show;
- ``to_json(result, settings)`` → the ``--json`` object (:mod:`tutor.lab.jsonout`);
- where the row names no engine function, or to do more: ``defaults()`` → its settings,
  ``run(settings, *, on_progress, should_stop)`` → a result (:mod:`engine.lab.progress`),
  ``stopped(result)`` (default: the result's ``interrupted`` or ``stopped`` flag);
- optionally ``save(result, settings)`` → files written, as notes; ``heatmaps(result)`` →
  weights for the Heatmaps area.

The row's ``kernels`` names the engine areas the run needs compiled (:func:`tutor.warmup.areas`):
the TUI waits for its warm-up to load them, the CLI loads them itself, before the progress
bars start. ``later`` names those it needs only once it has trained (the Transformer's
scoring): they load in the background while it trains, so the bars start sooner.

The table is plain data and the modules load on first use, so listing the experiments (the
palette, ``attn-tutor --help``) imports neither numpy nor numba.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tutor.lab.report import Style, renderable

if TYPE_CHECKING:
    from engine.lab.progress import ProgressFn, StopFn


@dataclass(frozen=True)
class Experiment:
    """One row of the table: its name, a one-line blurb, the module that runs and reports it,
    and whether the TUI's lab screen lists it."""

    name: str
    blurb: str
    module: str
    settings: str = ""
    """``"package.module:Class"``: the engine settings whose defaults the experiment runs with."""
    function: str = ""
    """``"package.module:function"``: the engine experiment ``run`` calls."""
    on_screen: bool = True
    kernels: tuple[str, ...] = ()
    """The warm-up areas (:func:`tutor.warmup.areas`) whose kernels the run needs."""
    later: tuple[str, ...] = ()
    """Areas the run needs only after training (scoring): loaded while it trains."""

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)

    def _hook(self, name: str) -> Any:
        """The module's own ``name``, or None."""
        return getattr(self.load(), name, None)

    def defaults(self) -> Any:
        own = self._hook("defaults")
        return own() if own else _resolve(self.settings)()

    def describe(self, settings: Any) -> str:
        own = self._hook("describe")
        return own(settings) if own else ""

    def bars(self, settings: Any) -> tuple[tuple[str, ...], int]:
        return self.load().bars(settings)

    def run(self, settings: Any = None, *, on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None) -> Any:
        """Run with ``settings`` (the defaults when None); see :mod:`engine.lab.progress`."""
        settings = self.defaults() if settings is None else settings
        run = self._hook("run") or _resolve(self.function)
        return run(settings, on_progress=on_progress, should_stop=should_stop)

    def stopped(self, result: Any) -> bool:
        """Whether a stop request ended ``result``'s run early."""
        own = self._hook("stopped")
        if own:
            return own(result)
        return bool(getattr(result, "interrupted", False) or getattr(result, "stopped", False))

    def report(self, result: Any, settings: Any = None, style: Style = Style()) -> list[Any]:
        return self.load().report(result, settings, style)

    def to_json(self, result: Any, settings: Any = None) -> dict[str, Any]:
        return self.load().to_json(result, settings)

    def save(self, result: Any, settings: Any) -> list[str]:
        own = self._hook("save")
        return own(result, settings) if own else []

    def heatmaps(self, result: Any) -> list[Any]:
        own = self._hook("heatmaps")
        return own(result) if own else []


def _resolve(target: str) -> Any:
    """``"package.module:name"`` → that object (imported now)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


SEQ2SEQ, TRANSFORMER = ("seq2seq lab",), ("transformer lab",)  # areas of tutor.warmup
SCORING = ("transformer scoring",)

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment("bottleneck", "fixed context vs attention as sequences grow", "tutor.lab.bottleneck",
               "engine.lab:BottleneckSettings", "engine.lab:bottleneck", kernels=SEQ2SEQ),
    Experiment("teacher-forcing", "training with ratio 1.0 vs 0.0", "tutor.lab.teacher_forcing",
               "engine.lab:TeacherForcingSettings", "engine.lab:teacher_forcing", kernels=SEQ2SEQ),
    Experiment("alignment", "the learned attention of a trained model as a heatmap",
               "tutor.lab.alignment", kernels=SEQ2SEQ),
    Experiment("train", "one model of your choice, saved and loaded as .npz", "tutor.lab.train",
               on_screen=False, kernels=SEQ2SEQ),
    Experiment("transformer", "a tiny Transformer trained live: its heads, and no positions",
               "tutor.lab.transformer", "tutor.lab.transformer:job_defaults", kernels=TRANSFORMER,
               later=SCORING),
    Experiment("transformer-vs-rnn", "the Transformer next to fixed context and attention RNNs",
               "tutor.lab.transformer", "tutor.lab.transformer:job_defaults_with_rnn",
               kernels=TRANSFORMER + SEQ2SEQ, later=SCORING),
    Experiment("scaling", "time and memory of plain vs tiled attention", "tutor.lab.scaling",
               "engine.lab.scaling:ScalingSettings", "engine.lab.scaling:scaling"),
    Experiment("saturation", "Var(q·k) and softmax saturation against d_k", "tutor.lab.saturation",
               "engine.lab.scaling:SaturationSettings", "engine.lab.scaling:saturation"),
)
BY_NAME: dict[str, Experiment] = {e.name: e for e in EXPERIMENTS}


def get(name: str) -> Experiment:
    """The experiment called ``name``; ``ValueError`` listing the names otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"no lab experiment {name!r}; expected one of: "
                         + ", ".join(BY_NAME)) from None


def on_screen() -> tuple[Experiment, ...]:
    """The experiments the TUI's lab screen and the palette offer, in table order."""
    return tuple(e for e in EXPERIMENTS if e.on_screen)


def results_renderable(name: str, result: Any, settings: Any = None, style: Style = Style()) -> Any:
    """A finished experiment's report as one Rich renderable (the TUI's results panel)."""
    return renderable(get(name).report(result, settings, style))
