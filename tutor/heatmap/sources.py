"""Which traces draw heatmaps, and what: every trace built once on its defaults, per process.

The Heatmaps screen lists these, the command palette offers "Heatmap NAME" only for them, and
the TUI's warm-up builds them while it loads the kernels, so neither waits later.
"""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()
_FOUND: dict[str, tuple[list[Any], list[Any]]] | None = None


def default_heatmaps() -> dict[str, tuple[list[Any], list[Any]]]:
    """Trace name → (heatmaps, errata) on the notes' defaults, for the traces that have any,
    in lecture order. Built on the first call (seconds), then kept; thread-safe. A trace whose
    builder fails is left out, never fatal."""
    global _FOUND
    with _LOCK:
        if _FOUND is None:
            from engine.traces import build, list_traces

            found: dict[str, tuple[list[Any], list[Any]]] = {}
            for info in list_traces():
                try:
                    trace = build(info.name)
                except Exception:  # noqa: BLE001 - a broken builder is skipped
                    continue
                if trace.heatmaps:
                    found[info.name] = (list(trace.heatmaps), list(trace.errata))
            _FOUND = found
        return dict(_FOUND)
