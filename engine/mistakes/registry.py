"""The computations: one module per trace under ``engine.mistakes.computations``.

Each module holds

* ``TRACE`` — the trace it computes (``attn-tutor trace NAME`` replays the right way);
* ``MISTAKES`` — the catalogue ids whose switch it has, in no particular order;
* ``PAIRS`` — the pairs of those that make sense together (tried after single mistakes);
* ``compute(inputs, s)`` — every checkable value of the trace from its (checked) inputs, with
  the mistakes of ``s`` (:class:`~engine.mistakes.slips.Slips`) built in. The keys are the
  names the trace's ``--json`` steps and result use; a name that several steps use for
  different numbers is qualified with its step (``pre-activation@2``);
* optionally ``EXTRAS`` — intermediates the trace writes out in its working without listing
  them as values (qkv's e^score and Σ), ``NOT_CHECKED`` — numeric trace values it leaves out,
  and for a computation that is not a trace, ``INPUTS`` and ``draw_inputs(rng)``.

With no slip on, ``compute`` must give the trace's own numbers (``tests/test_mistakes.py``
holds every trace to that on its defaults and on drawn inputs).
"""

from __future__ import annotations

import functools
import importlib
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from engine.mistakes.catalogue import MISTAKES
from engine.mistakes.slips import Slips
from engine.trace import coerce_inputs
from engine.traces import REGISTRY, get_info, input_specs

EXTRA: dict[str, str] = {"sequence-loss": "cross-entropy", "padded-pool": "pooling"}
"""Computations that are not traces (name → the trace that shows the nearest worked example)."""


@dataclass(frozen=True)
class Computation:
    """One trace's computation module and what it declares."""

    name: str
    trace: str
    module: ModuleType
    mistakes: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]

    def specs(self):
        """The inputs it takes (the trace's, or the extra computation's own)."""
        return getattr(self.module, "INPUTS", None) or input_specs(self.trace)


def names() -> list[str]:
    """Every computation: the 28 traces in lecture order, then the extras."""
    return list(REGISTRY) + list(EXTRA)


@functools.cache
def computation(name: str) -> Computation:
    """The computation of trace ``name``; ``ValueError`` (one line) when there is none."""
    if name in EXTRA:
        trace = EXTRA[name]
    else:
        trace = get_info(name).name  # raises the registry's one-line error for an unknown name
    module = importlib.import_module("engine.mistakes.computations." + name.replace("-", "_"))
    mistakes = tuple(module.MISTAKES)
    pairs = tuple(tuple(p) for p in module.PAIRS)
    for m in mistakes + tuple(i for p in pairs for i in p):
        if m not in MISTAKES:
            raise ValueError(f"computation {name}: {m!r} is not in the catalogue")
    return Computation(name, trace, module, mistakes, pairs)


def checked_inputs(name: str, inputs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The trace's defaults overlaid with ``inputs``, each checked (``ValueError`` if not)."""
    return coerce_inputs(computation(name).specs(), inputs)


def run(name: str, inputs: Mapping[str, Any] | None, ids: Sequence[str] = (),
        checked: bool = False) -> tuple[dict[str, np.ndarray], Slips]:
    """Every value of ``name`` on ``inputs`` with the mistakes ``ids`` built in, as float64
    arrays, and the :class:`Slips` of the run (its facts, the ids it asked about).

    ``checked=True`` when ``inputs`` already went through :func:`checked_inputs`.
    """
    comp = computation(name)
    inp = dict(inputs or {}) if checked else checked_inputs(name, inputs)
    key = (name, _digest(inp), frozenset(ids))
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    slips = Slips(ids)
    with np.errstate(all="ignore"):
        raw = comp.module.compute(inp, slips)
    values = _keys({k: np.asarray(v, dtype=np.float64) for k, v in raw.items()})
    for v in values.values():
        v.flags.writeable = False  # shared through the cache: nobody may change them
    _CACHE[key] = (values, slips)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return values, slips


_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 512
"""Recent runs: a diagnosis, its follow-up and the harness ask for the same runs again."""


def _digest(inp: Mapping[str, Any]) -> tuple:
    """A hashable fingerprint of checked inputs (arrays by shape and bytes)."""
    out: list[tuple[Any, ...]] = []
    for k in sorted(inp):
        v = inp[k]
        if isinstance(v, np.ndarray):
            out.append((k, v.shape, v.dtype.str, v.tobytes()))
        elif isinstance(v, list):
            out.append((k, tuple(v)))
        else:
            out.append((k, v))
    return tuple(out)


def _keys(values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``name@STEP`` keys stay only where one name has several different values; a name that
    only one step uses, or that every step gives the same number, is the bare name."""
    groups: dict[str, list[str]] = {}
    for k in values:
        if "@" in k:
            groups.setdefault(k.split("@")[0], []).append(k)
    out = dict(values)
    for base, keys in groups.items():
        first = values[keys[0]]
        if len(keys) == 1 or all(values[k].shape == first.shape and np.allclose(
                values[k], first, rtol=1e-12, atol=0, equal_nan=True) for k in keys):
            for k in keys:
                del out[k]
            out.setdefault(base, first)
    return out


def canonical(name: str) -> str:
    """A value name as typed or printed, compared: NFKC (``Q₂`` → ``Q2``), no spaces."""
    return "".join(unicodedata.normalize("NFKC", name).split())


def resolve(name: str, keys: Sequence[str], trace: str) -> str:
    """The key of ``keys`` that ``name`` means (exact, then NFKC/space-blind, then
    case-blind when that is unambiguous); ``ValueError`` naming the choices otherwise."""
    if name in keys:
        return name
    want = canonical(name)
    hits = [k for k in keys if canonical(k) == want]
    if not hits:
        hits = [k for k in keys if canonical(k).casefold() == want.casefold()]
    if not hits:
        bare = [k for k in keys if canonical(k.split("@")[0]) == want]
        if bare:
            raise ValueError(f"value {name!r} of trace {trace} is different at each step; name "
                             f"the step: " + ", ".join(bare))
    if len(hits) == 1:
        return hits[0]
    raise ValueError(f"no checkable value {name!r} in trace {trace}; expected one of: "
                     + ", ".join(keys))
