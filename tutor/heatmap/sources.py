"""Which traces draw heatmaps, and what: every trace built once on its defaults, per process.

The Heatmaps screen lists these, the command palette offers "Heatmap NAME" only for them, and
the TUI's warm-up builds them while it loads the kernels, so neither waits later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_LOCK = threading.Lock()
_BUILT: dict[str, tuple[list[Any], list[Any]] | None] = {}  # name → (heatmaps, errata), or None


def build_heatmaps(wanted: Callable[[str], bool] = lambda name: True) -> None:
    """Build, once per process, each trace whose name is ``wanted`` (the warm-up builds them
    in two parts, see :mod:`tutor.warmup`); thread-safe. A trace whose builder fails is left
    out, never fatal."""
    with _LOCK:
        from engine.traces import build, list_traces

        for info in list_traces():
            if info.name in _BUILT or not wanted(info.name):
                continue
            try:
                trace = build(info.name)
            except Exception:  # noqa: BLE001 - a broken builder is skipped
                _BUILT[info.name] = None
                continue
            _BUILT[info.name] = (list(trace.heatmaps), list(trace.errata)) if trace.heatmaps else None


def default_heatmaps() -> dict[str, tuple[list[Any], list[Any]]]:
    """Trace name → (heatmaps, errata) on the notes' defaults, for the traces that have any,
    in lecture order. Built on the first call (seconds), then kept."""
    from engine.traces import list_traces

    build_heatmaps()
    with _LOCK:
        return {info.name: found for info in list_traces()
                if (found := _BUILT.get(info.name)) is not None}
