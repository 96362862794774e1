"""Load (or, on a first run, compile) the engine's kernels in the background.

The TUI paints first and calls :func:`warm_engine` from a worker thread. With a warm numba
cache this takes a fraction of a second; with an empty cache (first run after install) every
kernel compiles once, which is why the UI says it is preparing. A cold cache is told apart
cheaply by :func:`cache_is_cold`; then :mod:`tutor.warmup_procs` compiles the two halves of
:func:`plan_children` in two child processes (numba compiles on one core) before the in-process
load.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence

import numpy as np


def _tiny_calls() -> list[tuple[str, Callable[[], object]]]:
    """One small call per engine area; each module is imported only when its call runs."""

    def call(module: str, name: str, *args, **kwargs) -> Callable[[], object]:
        return lambda: getattr(importlib.import_module(module), name)(*args, **kwargs)

    x = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]])
    x32 = x.astype(np.float32)
    return [
        # the lab's seq2seq first: its two halves are the longest compiles a feature waits for,
        # and on a cold cache they go to the two child processes (see plan_children)
        ("seq2seq lab (forward)", call("engine.lab", "warm_up", "forward")),
        ("seq2seq lab (backward)", call("engine.lab", "warm_up", "backward")),
        # then the Transformer lab's halves, the next longest: each follows a seq2seq half
        ("transformer lab", call("engine.lab.transformer", "warm_up", part="forward")),
        ("transformer lab (backward)", lambda: _transformer_backward()),
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
        # every trace, in three areas of a few seconds each so two processes can share them
        ("worked examples", lambda: _traces("worked examples")),
        ("worked examples (backward)", lambda: _traces("worked examples (backward)")),
        ("worked examples (decoding)", lambda: _traces("worked examples (decoding)")),
    ]


TRACE_AREAS: dict[str, frozenset[str]] = {
    "worked examples (backward)": frozenset({"additive-backward", "softmax-jacobian",
                                             "cross-entropy", "training-step",
                                             "attention-backward"}),
    "worked examples (decoding)": frozenset({"greedy-vs-beam", "beam-search", "top-k", "nucleus",
                                             "temperature"}),
}
"""The traces of each worked-examples area but the first (§10's gradients, §11's search and
sampling); the "worked examples" area builds all the others."""


def _traces(area: str) -> None:
    """Build the traces of one area once: they reach the kernels the tiny calls above do not
    (cells, CE grad…), and their heatmaps are kept for the Heatmaps screen and the palette."""
    from tutor.heatmap.sources import build_heatmaps

    others = frozenset().union(*TRACE_AREAS.values())
    build_heatmaps(lambda name: name in TRACE_AREAS[area] if area in TRACE_AREAS
                   else name not in others)


ISOLATED = False
"""True in a warm-up child (:func:`tutor.warmup_procs.main`), a process that runs nothing but
warm-up areas: there an area may swap kernels in their modules while it compiles."""


def _transformer_backward() -> None:
    """The Transformer's backward half: compiled by argument type with its forward kernels
    swapped out in a warm-up child; anywhere else (the TUI's own process, where a lab run may
    be calling those kernels) a whole tiny step, which only loads once the cache is warm."""
    from engine.lab.transformer import warm_up

    warm_up(part="backward" if ISOLATED else "all")


def _beam() -> object:
    from engine.decoding import beam_search
    from engine.traces.lecture_beam import lecture_beam_example

    example = lecture_beam_example()
    return beam_search(example.model, 2, 3)


def warm_engine(report: Callable[[str, int, int], None] | None = None, *,
                should_stop: Callable[[], bool] | None = None,
                before: Callable[[str], None] | None = None) -> float:
    """Run one tiny call per engine area; returns the seconds it took.

    ``report(name, done, total)`` is called before each area. Areas whose module is missing
    or fails are skipped: warming up is an optimisation, never a reason to crash. When
    ``should_stop()`` turns true (the app is quitting) no further area starts and "done" is
    not reported. ``before(name)``, if given, runs first for each area (e.g. waits until a
    child process has compiled it).
    """
    start = time.perf_counter()
    calls = _tiny_calls()
    for i, (name, fn) in enumerate(calls):
        if before is not None:
            before(name)
        if should_stop is not None and should_stop():
            return time.perf_counter() - start
        if report:
            report(name, i, len(calls))
        try:
            fn()
        except Exception:  # noqa: BLE001 - warm-up must never take the UI down
            continue
    if report:
        report("done", len(calls), len(calls))
    return time.perf_counter() - start


# -- the cold-cache split -----------------------------------------------------------------

COLD_SECONDS: dict[str, float] = {
    "seq2seq lab (forward)": 6.8, "seq2seq lab (backward)": 6.0, "transformer lab": 5.3,
    "transformer lab (backward)": 3.6, "log-softmax": 0.6, "tiled attention": 2.6,
    "worked examples": 4.4, "worked examples (backward)": 5.5, "worked examples (decoding)": 3.9,
}
"""CPU seconds each area takes alone in a fresh process on an empty numba cache (2-core AMD
EPYC, load 0.3, 2 Dec 2026, numba 0.68.1; ``python benchmarks/startup.py --solo`` prints this
table again; a 2-core Intel Xeon gave 1.2–1.6 times each). Only their order matters: it orders
the queue of :func:`plan_children`. An area missing here (and not in :data:`RIDES_WITH`)
counts as 1 s."""

RIDES_WITH: dict[str, str] = {
    **{name: "worked examples"
       for name in ("softmax", "masked softmax", "attention", "scoring", "pooling", "rnn", "loss")},
    **{name: "worked examples (decoding)" for name in ("beam search", "sampling")},
}
"""Areas whose every kernel another area compiles too: they go to that area's process, where
they cost nothing more (compiled in the other process, they would be compiled twice)."""

SENTINELS: dict[str, str] = {
    "sampling": "engine.decoding._kernels",
    "tiled attention": "engine.flash",
    "worked examples": "engine.rnn:_decoder_step_kernel",
    "worked examples (backward)": "engine.softmax_backward",
    "seq2seq lab (forward)": "engine.seq2seq._kernels:_decode",
    "seq2seq lab (backward)": "engine.seq2seq._kernels:_decode_backward",
    "transformer lab": "engine.transformer._kernels:_linear",
    "transformer lab (backward)": "engine.transformer._kernels:_linear_backward",
}
"""For the costly areas, a module whose jitted kernels that area compiles (``module:kernel``:
that one kernel of it, where another area compiles the module's other kernels): if one of
these has nothing in numba's cache for this machine, the cache is cold."""


APART: tuple[tuple[str, ...], ...] = (("seq2seq lab (forward)", "seq2seq lab (backward)"),
                                      ("transformer lab", "transformer lab (backward)"))
"""Areas that are halves of one feature: on a cold cache they compile in different processes,
side by side, so the feature waits for the longer half rather than for both."""


LOADER_AREAS: dict[str, tuple[str, ...]] = {
    "engine.lab.training": ("seq2seq lab (forward)", "seq2seq lab (backward)"),
    "tutor.lab.transformer": ("transformer lab", "transformer lab (backward)"),
}
"""The module of a lab experiment's ``warm_up`` → the warm-up areas that compile its kernels."""


def areas_of(load: Callable[[], object] | None) -> tuple[str, ...]:
    """The warm-up areas whose kernels ``load`` (an experiment's ``warm_up``) loads, if known."""
    return LOADER_AREAS.get(getattr(load, "__module__", ""), ())


def plan_children(names: list[str], parts: int = 2) -> tuple[list[list[str]], list[list[str]]]:
    """What ``parts`` child processes compile on a cold cache: ``(firsts, queue)``.

    Each child starts with its list in ``firsts``: the members of each :data:`APART` tuple go
    to different children, so the halves of one feature compile side by side. Then each child
    takes the next group of ``queue`` whenever it is free, so the work balances itself on any
    CPU (a fixed split balanced by one machine's compile times left one child 3 s longer than
    the other on another). An area rides in the group of its :data:`RIDES_WITH` host when that
    host is in ``names``; groups are ordered costliest first by :data:`COLD_SECONDS` (longest
    first keeps the last group short), ties in the order of ``names``, and each group keeps
    the order of ``names``.
    """
    firsts: list[list[str]] = [[] for _ in range(parts)]
    apart = [n for pair in APART for n in pair if n in names]
    for k, n in enumerate(apart):
        firsts[k % parts].append(n)
    host_of = {n: RIDES_WITH[n] if RIDES_WITH.get(n) in names else n
               for n in names if n not in apart}
    heads = sorted(set(host_of.values()),
                   key=lambda n: (-COLD_SECONDS.get(n, 1.0), names.index(n)))  # costliest first
    return firsts, [[n for n in names if host_of.get(n) == head] for head in heads]


def module_is_cached(sentinel: str) -> bool | None:
    """Whether one of a module's own jitted kernels (``module``), or the one kernel
    ``module:kernel``, has machine code in numba's cache for this numba version, this source
    and this CPU (imports the module; compiles nothing); None when there is no caching kernel
    to look at (e.g. ``NUMBA_DISABLE_JIT=1``)."""
    from numba.core.dispatcher import Dispatcher
    from numba.core.registry import cpu_target

    module_name, _, kernel = sentinel.partition(":")
    module = importlib.import_module(module_name)
    magic = cpu_target.target_context.codegen().magic_tuple()  # (triple, CPU name, features)
    looked = False
    for name, obj in vars(module).items():
        if not (isinstance(obj, Dispatcher) and obj.__module__ == module_name):
            continue
        if kernel and name != kernel:
            continue
        cache_file = getattr(getattr(obj, "_cache", None), "_cache_file", None)
        index = getattr(cache_file, "_load_index", None)
        if index is None:  # a kernel without cache=True
            continue
        looked = True
        # an index written by another numba or for an older source loads as {}
        if any(key[1] == magic for key in index()):
            return True
    return False if looked else None


def areas_are_cold(areas: Sequence[str]) -> bool:
    """Whether one of ``areas`` with a sentinel has nothing in numba's cache. False when that
    cannot be told: warming in-process is always correct, only slower."""
    try:
        return any(module_is_cached(SENTINELS[a]) is False for a in areas if a in SENTINELS)
    except Exception:  # noqa: BLE001 - a private numba API moved: keep the plain warm-up
        return False


def cache_is_cold() -> bool:
    """Whether a costly area's kernels are missing from numba's cache (first run after
    install, new numba, new CPU)."""
    return areas_are_cold(list(SENTINELS))
