"""Registry of the worked-example traces (``attn-tutor trace NAME``).

The table below is plain metadata, so listing traces imports neither numba nor the
builders. Each builder module ``engine.traces.<module>`` defines ``INPUTS`` (a list of
:class:`engine.trace.InputSpec`) and ``build(**inputs) -> Trace``.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from engine.trace import InputSpec, Trace, coerce_inputs


@dataclass(frozen=True)
class TraceInfo:
    """What the trace list shows: name, lecture section, title, one-line description."""

    name: str
    section: int
    title: str
    description: str

    @property
    def module(self) -> str:
        return "engine.traces." + self.name.replace("-", "_")


_TABLE = [
    ("encoder", 1, "Tiny RNN encoder", 'H_t = tanh(W_HX X_t + W_HH H_{t-1} + b) over "cat sat mat"; C = H_3'),
    (
        "decoder-step",
        1,
        "One decoder step",
        "H_t = f(W_HH H_{t-1} + W_HY Y_{t-1} + W_HC C + b), then softmax(W_O H_t)",
    ),
    (
        "bottleneck",
        2,
        "The fixed-context bottleneck",
        "how much of early tokens survives in C = H_T as the input grows",
    ),
    (
        "teacher-forcing",
        3,
        "Teacher forcing vs free running",
        "the same tiny decoder fed ground truth or its own guesses",
    ),
    (
        "error-cascade",
        3,
        "Error cascade on a table decoder",
        "teacher forcing vs free running, one table lookup per step",
    ),
    ("dynamic-context", 4, "Dynamic context vectors", 'C_t = Σ α_ti H_i for "my feet hurt" → French'),
    ("qkv", 5, 'Q, K, V for "I love cats"', "projections, scaled scores, softmax and output for position 2"),
    ("self-attention", 6, "Self-attention, all positions", "softmax(Q Kᵀ / √d_k) V row by row"),
    ("scores", 6, "Scaled dot-product scores", "Q = [0.5, -0.2] against three keys: scores and weights"),
    (
        "cross-attention",
        7,
        "Cross-attention for QA",
        'decoder query over encoder states: "What year was independence?"',
    ),
    ("scoring-compare", 8, "Scaled dot vs additive", "Q = [1, 0, -1], K = [0, 1, -1]: 0.58 vs 0.56"),
    ("scaling", 8, "Why divide by √d_k", "Var(q·k) grows with d_k; softmax saturates without scaling"),
    ("masking", 8, "Padding and causal masks", "masked positions get weight exactly 0"),
    (
        "additive-backward",
        8,
        "Gradients of additive attention",
        "shared with dot-product up to the scores, then into v, through tanh, into W_q, W_k",
    ),
    (
        "softmax-jacobian",
        8,
        "The softmax Jacobian",
        '∂α/∂s = diag(α) − ααᵀ on the "I love cats" scores; saturation without the √d_k',
    ),
    (
        "distance-scores",
        8,
        "Distance-based scores",
        "s = −‖q − k‖² on the notes' scalar-example query and keys: ‖q‖² cancels, ‖k‖² stays as a bias",
    ),
    ("multi-head", 6, "Multi-head attention", "heads as slices of the projections, concatenated, then W_O"),
    (
        "multi-head-cost",
        6,
        "What multi-head attention costs",
        "parameters and FLOPs as n, d_model, h grow; Vaswani et al. Table 1 at your n and d",
    ),
    ("positional-encoding", 6, "Sinusoidal positional encoding", "PE(pos, 2i) = sin(pos / 10000^(2i/d))"),
    ("pooling", 9, "Max, mean and attention pooling", "[2, 8, 3, 100, 4]: 100 vs 23.4 vs 9.5"),
    ("greedy-vs-beam", 10, "Greedy vs beam search", 'the/a → cat/dog: greedy picks "the", beam keeps "a"'),
    (
        "beam-search",
        10,
        "Beam search step by step",
        "candidates, cumulative log-probs, survivors, finished pool",
    ),
    ("top-k", 10, "Top-k filtering", "keep the k most probable tokens (ties kept) and renormalise"),
    ("nucleus", 10, "Nucleus (top-p) filtering", "the smallest set whose mass reaches p"),
    ("temperature", 10, "Temperature", "softmax(z / T): sharper below 1, flatter above 1"),
    ("heatmap-reading", 11, "Reading a heatmap", '"my feet hurt" → "j\' ai mal au pieds"'),
    ("cross-entropy", 12, "Cross-entropy loss", '"cat" → "chat": 0.511 + 0.223 = 0.734, and its gradient'),
    ("training-step", 12, "One training step", "forward, loss, backward and an update on a tiny decoder"),
    (
        "attention-backward",
        12,
        "Backpropagation through attention",
        "dV = αᵀ dO, dα = dO Vᵀ, the softmax Jacobian, dQ, dK, then W_Q, W_K, W_V",
    ),
]

REGISTRY: dict[str, TraceInfo] = {row[0]: TraceInfo(*row) for row in _TABLE}

# Traces whose work is big enough to need machine code (``scaling`` samples thousands of
# dot products and softmaxes). Every other trace computes on worked-example sizes, which the
# kernels' own source handles faster interpreted than numba can be loaded (engine._jit) —
# up to this many numbers, words and sizes among the student's overrides.
_COMPILED = frozenset({"scaling"})
SMALL_INPUTS = 256


def interpretable(name: str, overrides: Mapping[str, Any] | None = None) -> bool:
    """Whether a process that only builds this trace should run its kernels interpreted.

    True for every trace but ``scaling`` while the overrides stay worked-example sized: each
    array or list counts its elements, a whole number its value (a width, a length, a step
    count; not a seed), anything else 1, and the total must not exceed :data:`SMALL_INPUTS`.
    """
    if get_info(name).name in _COMPILED:
        return False
    return sum(_size(key, value) for key, value in (overrides or {}).items()) <= SMALL_INPUTS


def _leaves(value: Any) -> int:
    """How many numbers or words a (nested) list holds."""
    return sum(_leaves(v) for v in value) if isinstance(value, (list, tuple)) else 1


def _size(key: str, value: Any) -> int:
    if isinstance(value, str):
        return max(1, len(value.split()))
    if isinstance(value, np.ndarray):
        return max(1, int(value.size))
    if isinstance(value, (list, tuple)):
        return max(1, _leaves(value))
    if (key != "seed" and isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value == int(value)):
        return max(1, abs(int(value)))
    return 1


def list_traces() -> list[TraceInfo]:
    """All traces in lecture order."""
    order = {row[0]: i for i, row in enumerate(_TABLE)}
    return sorted(REGISTRY.values(), key=lambda t: (t.section, order[t.name]))


def get_info(name: str) -> TraceInfo:
    """The registry entry; ``ValueError`` listing the names when it is unknown."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"no trace named {name!r}; expected one of: " + ", ".join(REGISTRY)
        ) from None


def _module(name: str) -> ModuleType:
    return importlib.import_module(get_info(name).module)


def input_specs(name: str) -> list[InputSpec]:
    """The inputs a trace accepts, with their defaults."""
    return list(_module(name).INPUTS)


def build(name: str, overrides: Mapping[str, Any] | None = None) -> Trace:
    """Build trace ``name`` from its defaults overlaid with ``overrides`` (checked first)."""
    module = _module(name)
    inputs = coerce_inputs(module.INPUTS, overrides)
    return module.build(**inputs)


def draw_inputs(name: str, rng: np.random.Generator) -> dict[str, Any]:
    """Fresh inputs for trace ``name``, drawn by the trace itself (its ``draw_inputs(rng)``).

    Small integers or one-decimal numbers at the sizes of a worked example, valid for the
    trace's ``INPUTS`` and keeping its fused check; practice traces and the diagnosis harness
    use them so that a remembered answer is not a solved problem.
    """
    return _module(name).draw_inputs(rng)


# Inputs on which a trace of _COMPILED draws heatmaps with the same titles, labels and shapes as
# on its defaults, at a sliver of the work (their values differ): ``scaling``'s Monte Carlo
# samples come before its heatmap's draws and do not size it.
_LISTING_INPUTS: dict[str, dict[str, Any]] = {"scaling": {"samples": 10}}


def build_for_listing(name: str) -> Trace:
    """Trace ``name`` built to list what it draws (its heatmaps' titles, labels and shapes),
    cheap enough to run interpreted: the defaults, but :data:`_LISTING_INPUTS` for a trace whose
    defaults need compiled kernels. Its numbers are not the defaults' where those differ."""
    return build(name, _LISTING_INPUTS.get(get_info(name).name))
