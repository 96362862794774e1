"""The public functions of :mod:`engine.mistakes` besides :func:`diagnose` and
:func:`follow_up`: what can be checked, running a computation with mistakes built in (every
value, or one value as a question names it), fresh inputs, and which mistakes change which
value."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.mistakes import registry
from engine.mistakes.catalogue import MISTAKES, Mistake
from engine.mistakes.diagnosis import _pick, split_index
from engine.traces import draw_inputs as _draw_trace_inputs


def computations() -> list[str]:
    """Every name :func:`diagnose` accepts: the 28 traces, then any extra computations."""
    return registry.names()


def checkable(trace: str, inputs: Mapping[str, Any] | None = None) -> dict[str, tuple[int, ...]]:
    """The value names of ``trace`` that can be checked (the names its ``--json`` steps and
    result use; a name that differs from step to step carries ``@STEP``), each with its
    shape on these inputs."""
    values, _ = registry.run(trace, inputs)
    return {k: v.shape for k, v in values.items()}


def run_with(trace: str, inputs: Mapping[str, Any] | None, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Every checkable value of ``trace`` on ``inputs`` (None = the notes' defaults) computed
    with the mistakes ``ids`` built in (``()`` = the right computation, which agrees with the
    trace's own values)."""
    values, _ = registry.run(trace, inputs, tuple(ids))
    return {k: v.copy() for k, v in values.items()}


def draw_inputs(trace: str, rng: np.random.Generator) -> dict[str, Any]:
    """Fresh inputs for ``trace`` (or an extra computation), drawn by its own drawer."""
    module = registry.computation(trace).module
    own = getattr(module, "draw_inputs", None)
    return own(rng) if own else _draw_trace_inputs(trace, rng)


_PROBE_DRAWS = 6


@functools.cache
def _changes(trace: str) -> dict[str, frozenset[str]]:
    """For each declared mistake, the value names it changes on the defaults or on a few
    seeded draws (a mistake can only show where its number differs from the right one)."""
    comp = registry.computation(trace)
    rng = np.random.default_rng(20240)
    problems = [None] + [draw_inputs(trace, rng) for _ in range(_PROBE_DRAWS)]
    out: dict[str, set[str]] = {m: set() for m in comp.mistakes}
    for problem in problems:
        right, _ = registry.run(trace, problem)
        for m in comp.mistakes:
            wrong, _ = registry.run(trace, problem, (m,))
            for k, x in right.items():
                y = wrong.get(k)
                if y is not None and (y.shape != x.shape or not np.allclose(
                        x, y, rtol=1e-9, atol=1e-9, equal_nan=True)):
                    out[m].add(k.split("@")[0])
    return {m: frozenset(v) for m, v in out.items()}


def mistakes_for(trace: str, name: str) -> list[Mistake]:
    """The catalogued mistakes that change value ``name`` of ``trace`` (on its defaults or on
    drawn inputs), in catalogue order."""
    key = registry.canonical(name.split("@")[0])
    changes = _changes(trace)
    return [m for m in MISTAKES.values()
            if m.id in changes and any(registry.canonical(k) == key for k in changes[m.id])]


def applies_to(mistake: str) -> list[str]:
    """The computations that declare ``mistake``."""
    return [name for name in registry.names() if mistake in registry.computation(name).mistakes]


def value_key(trace: str, inputs: Mapping[str, Any] | None, name: str, step: int | None = None) -> str | None:
    """The key :func:`diagnose` and :func:`checkable` use for value ``name`` as step ``step``
    (1-based) of the built trace shows it: the name itself, or ``name@step`` where several
    steps give that name different numbers; None when the value is not checkable (words,
    labels)."""
    keys = checkable(trace, inputs)
    if name in keys:
        return name
    qualified = f"{name}@{step}"
    return qualified if qualified in keys else None


def value_of(trace: str, inputs: Mapping[str, Any] | None, name: str,
             ids: Sequence[str] = ()) -> np.ndarray:
    """Value ``name`` of ``trace`` on ``inputs`` with the mistakes ``ids`` built in, named as
    :func:`~engine.mistakes.diagnose` takes it (``Q2`` for ``Q₂``; ``A[2]`` one row,
    ``J[1,2]`` one entry, counting from 1). ``ValueError`` (one line) when there is no such
    value (or the mistakes leave that row or entry out)."""
    values, _ = registry.run(trace, inputs, tuple(ids))
    base, index = split_index(name)
    key = registry.resolve(base, list(values), trace)
    return np.array(_pick(values[key], index, key))
