"""The mistake catalogue and the diagnosis of a student's number (lecture §1–§13).

When a student's number is wrong, the engine re-runs the computation with each catalogued
mistake built in and names the mistake that gives the student's number, on any inputs.

* :mod:`engine.mistakes.catalogue` — the :class:`Mistake` records (:data:`MISTAKES`).
* :mod:`engine.mistakes.computations` — one module per trace: its arithmetic written once,
  each slip behind a switch (:class:`~engine.mistakes.slips.Slips`).
* :mod:`engine.mistakes.diagnosis` — the matching rule, :func:`diagnose`, :func:`follow_up`.
* :mod:`engine.mistakes.api` — :func:`checkable`, :func:`run_with`, :func:`mistakes_for`,
  :func:`draw_inputs`, :func:`value_key`, :func:`value_of`.
* :mod:`engine.mistakes.students` — simulated students that measure the diagnosis.

The names below load on first use, so ``engine.mistakes.catalogue`` alone (the records, for a
content loader) imports neither NumPy nor the traces. Engine layer: NumPy and engine
functions only, nothing from ``tutor/``, no I/O.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "MISTAKES": "engine.mistakes.catalogue",
    "Mistake": "engine.mistakes.catalogue",
    "Diagnosis": "engine.mistakes.diagnosis",
    "Check": "engine.mistakes.diagnosis",
    "diagnose": "engine.mistakes.diagnosis",
    "follow_up": "engine.mistakes.diagnosis",
    "checkable": "engine.mistakes.api",
    "run_with": "engine.mistakes.api",
    "mistakes_for": "engine.mistakes.api",
    "draw_inputs": "engine.mistakes.api",
    "computations": "engine.mistakes.api",
    "applies_to": "engine.mistakes.api",
    "value_key": "engine.mistakes.api",
    "value_of": "engine.mistakes.api",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine.mistakes' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
