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


Found = tuple[list[Any], list[Any]]
"""A trace's default (heatmaps, errata)."""


def build_heatmaps(wanted: Callable[[str], bool] = lambda name: True,
                   on_built: Callable[[str, Found | None], None] | None = None) -> None:
    """Build, once per process, each trace whose name is ``wanted``, in lecture order (the
    warm-up builds them one by one, see :mod:`tutor.warmup`); thread-safe. A trace whose builder
    fails is left out, never fatal. ``on_built(name, found)`` is called after each wanted trace
    (built now or earlier), with None for one that draws no heatmap; it runs outside the lock.

    The lock is held for one trace at a time, so a screen asking for every trace waits for at
    most one build of the warm-up's, and its first traces arrive while later ones compile."""
    from engine.traces import build, list_traces  # looked up per call: tests replace it

    for info in list_traces():
        if not wanted(info.name):
            continue
        with _LOCK:
            if info.name not in _BUILT:
                try:
                    trace = build(info.name)
                except Exception:  # noqa: BLE001 - a broken builder is skipped
                    _BUILT[info.name] = None
                else:
                    _BUILT[info.name] = ((list(trace.heatmaps), list(trace.errata))
                                         if trace.heatmaps else None)
            found = _BUILT[info.name]
        if on_built is not None:
            on_built(info.name, found)


def built_heatmaps() -> dict[str, Found]:
    """What :func:`default_heatmaps` would return, but only the traces built so far: no wait.

    It reads without the lock, which a build holds for seconds while it compiles: the UI thread
    calls this (the palette on every search), and it must never block there. Each entry is
    written once, whole, by one dict assignment, so a reader sees it built or absent."""
    from engine.traces import list_traces  # looked up per call: tests replace it

    return {info.name: found for info in list_traces()
            if (found := _BUILT.get(info.name)) is not None}


def default_heatmaps() -> dict[str, Found]:
    """Trace name → (heatmaps, errata) on the notes' defaults, for the traces that have any,
    in lecture order. Built on the first call (seconds on a first run), then kept."""
    build_heatmaps()
    return built_heatmaps()
