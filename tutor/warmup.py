"""Load (or, on a first run, compile) the engine's kernels in the background.

The TUI paints first and calls :func:`warm_engine` from a worker thread. With a warm numba
cache this takes a fraction of a second; with an empty cache (first run after install) every
kernel compiles once, which is why the UI says it is preparing.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

import numpy as np


def _tiny_calls() -> list[tuple[str, Callable[[], object]]]:
    """One small call per engine area; each module is imported only when its call runs."""

    def call(module: str, name: str, *args, **kwargs) -> Callable[[], object]:
        return lambda: getattr(importlib.import_module(module), name)(*args, **kwargs)

    x = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]])
    x32 = x.astype(np.float32)
    return [
        ("softmax", call("engine.softmax", "softmax", x)),
        ("masked softmax", call("engine.softmax", "masked_softmax", x, x > 0)),
        ("log-softmax", call("engine.softmax", "log_softmax", x)),
        ("attention", call("engine.attention", "attention", x, x, x)),
        ("scoring", call("engine.scoring", "additive_scores", x, x, np.eye(3), np.eye(3), np.ones(3))),
        ("pooling", call("engine.pooling", "mean_pool", x)),
        ("rnn", call("engine.rnn", "rnn_encoder", x, np.eye(3), 0.5 * np.eye(3), np.zeros(3))),
        ("loss", call("engine.loss", "cross_entropy", x, np.array([0, 1]))),
        ("beam search", lambda: _beam()),
        ("sampling", call("engine.decoding", "filtered_probs", x[0], top_k=2, top_p=0.9)),
        # float32, as the lab's scaling and the block calibration use it (float64 compiles
        # only for a student who asks for it)
        ("tiled attention", call("engine.flash", "flash_attention", x32, x32, x32)),
        ("worked examples", lambda: _all_traces()),
        ("seq2seq lab", call("engine.lab", "warm_up")),
        ("transformer lab", call("engine.lab.transformer", "warm_up")),
    ]


def _all_traces() -> None:
    """Build every trace once: it reaches the kernels the tiny calls above do not (cells, CE grad…),
    and keeps their heatmaps for the Heatmaps screen and the palette."""
    from tutor.heatmap.sources import default_heatmaps

    default_heatmaps()


def _beam() -> object:
    from engine.decoding import beam_search
    from engine.traces.lecture_beam import lecture_beam_example

    example = lecture_beam_example()
    return beam_search(example.model, 2, 3)


def warm_engine(report: Callable[[str, int, int], None] | None = None) -> float:
    """Run one tiny call per engine area; returns the seconds it took.

    ``report(name, done, total)`` is called before each area. Areas whose module is missing
    or fails are skipped: warming up is an optimisation, never a reason to crash.
    """
    start = time.perf_counter()
    calls = _tiny_calls()
    for i, (name, fn) in enumerate(calls):
        if report:
            report(name, i, len(calls))
        try:
            fn()
        except Exception:  # noqa: BLE001 - warm-up must never take the UI down
            continue
    if report:
        report("done", len(calls), len(calls))
    return time.perf_counter() - start
