"""Numbers for the numeric parts of structured exam questions, computed by the engine.

A *maker* turns a seeded generator into :class:`Numbers`: ``fields`` (formatted values the
question's stem and prompts quote as ``{name}``) and ``steps`` (one :class:`Step` per numeric
part: the answer, its tolerance, the computed working, and, for a step that builds on earlier
ones, ``redo`` — the same computation run on any values given for the steps it ``uses``).
``redo`` is what follow-through marking calls with the student's own earlier answers.

A step also names where its number is computed in the mistake catalogue (``link``: a
computation, its inputs — the maker's own numbers — and the value), so a wrong answer is
diagnosed; a step that builds on earlier ones may give ``relink``, the same link built on the
student's own earlier values, so a later part worked from a wrong earlier value with a
catalogued mistake is named too (follow-through). Helpers for the common links:
:func:`softmax_link`, :func:`context_link`.

The same (maker, seed) always gives the same numbers. Makers live in :mod:`.sequence`
(§1–4, §12), :mod:`.attention` (§5–9), :mod:`.reading` (§10–11) and :mod:`.variants` (Luong's
scores, several heads: beyond the notes' examples); they import the engine
only when called, so listing them is cheap.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tutor.marking import Link

Value = float | tuple[float, ...]


def one(value: Value) -> float:
    """``value`` as the single number a scalar step holds (``TypeError`` for a vector)."""
    if isinstance(value, tuple):
        raise TypeError(f"expected one number, got {len(value)}")
    return float(value)

_MODULES = ("sequence", "attention", "reading", "variants")
MAKERS: dict[str, Callable[[Any], Numbers]] = {}


@dataclass(frozen=True)
class Step:
    """One computed answer of a numeric part.

    ``answer`` is a float or a tuple of floats; a student's value within ±``tolerance`` (per
    entry) is right. ``uses`` names earlier steps whose values ``redo(values)`` consumes, where
    ``values`` maps each used step to a float or tuple; ``redo`` returns this step's answer
    computed from them. ``link``: where the answer is in the mistake catalogue (None: no
    computation gives it); ``relink(values)``: that link on the student's earlier values.
    """

    answer: Value
    tolerance: float
    working: tuple[str, ...]
    uses: tuple[str, ...] = ()
    redo: Callable[[Mapping[str, Value]], Value] | None = field(default=None, compare=False)
    link: Link | None = field(default=None, compare=False)
    relink: Callable[[Mapping[str, Value]], Link] | None = field(default=None, compare=False)

    @property
    def size(self) -> int | None:
        """Entries of a vector answer; None for a single number."""
        return len(self.answer) if isinstance(self.answer, tuple) else None


@dataclass(frozen=True)
class Numbers:
    """A maker's output for one seed: quoted ``fields`` and computed ``steps``."""

    fields: dict[str, str]
    steps: dict[str, Step]
    data: dict[str, Any] = field(default_factory=dict, compare=False)


def maker(name: str) -> Callable[[Callable[[Any], Numbers]], Callable[[Any], Numbers]]:
    """Register a maker function under ``name``."""
    def register(fn: Callable[[Any], Numbers]) -> Callable[[Any], Numbers]:
        MAKERS[name] = fn
        return fn
    return register


def _load_all() -> None:
    for module in _MODULES:
        importlib.import_module(f"{__name__}.{module}")


def names() -> list[str]:
    """Every maker name."""
    _load_all()
    return sorted(MAKERS)


def make(name: str, seed: int) -> Numbers:
    """The numbers of maker ``name`` for ``seed``.

    Raises:
        ValueError: for an unknown maker.
    """
    import numpy as np  # deferred: loads numpy (start-up time)

    _load_all()
    try:
        fn = MAKERS[name]
    except KeyError:
        raise ValueError(f"no exam numbers maker {name!r}; expected one of: "
                         + ", ".join(sorted(MAKERS))) from None
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])
    return fn(rng)


def nonzero_grid(rng: Any, lo: float, hi: float, step: float, size: Any) -> Any:
    """Grid numbers (see ``tutor.quiz.generators.scoring.grid``) that are not all zero."""
    from tutor.quiz.generators.scoring import grid  # deferred: loads numpy, rich (start-up time)

    while True:
        x = grid(rng, lo, hi, step, size)
        if x.any():
            return x


def weighted_sum(weights: Any, rows: Any) -> tuple[float, ...]:
    """Σ_i w_i · rows[i] for *any* weights (a student's weights need not sum to 1), as the
    engine's dot products of the weight vector with each column of ``rows``."""
    import numpy as np  # deferred: loads numpy (start-up time)

    from engine.scoring import dot_scores  # deferred: loads numba (start-up time)

    R = np.asarray(rows, dtype=float)  # (n, d)
    return as_tuple(dot_scores(np.asarray(weights, dtype=float)[None, :], R.T)[0])  # (d,)


def as_tuple(x: Any) -> tuple[float, ...]:
    """A 1-D array (or sequence) as a tuple of Python floats."""
    import numpy as np  # deferred: loads numpy (start-up time)

    return tuple(float(v) for v in np.ravel(np.asarray(x, dtype=float)))


def words(n: int, stem: str = "w") -> list[str]:
    """``w1 … wn``: labels for a trace's tokens, keys or words."""
    return [f"{stem}{i + 1}" for i in range(n)]


def softmax_link(logits: Any, labels: Any = None) -> Link:
    """The weights ``softmax(logits)`` in the catalogue: the temperature trace at T = 1, whose
    mistakes include scores divided by their sum (no exponentials) and rounded intermediates."""
    z = as_tuple(logits)
    return Link("temperature", "P_T=1", {"words": list(labels or words(len(z))), "logits": list(z),
                                         "temperatures": [1.0]})


def context_link(weights: Any, states: Any) -> Link:
    """``Σ_i α_i H_i`` in the catalogue: the dynamic-context trace with one target word, whose
    mistakes include the last state for the blend and the mean of the states."""
    import numpy as np  # deferred: loads numpy (start-up time)

    H = np.asarray(states, dtype=float)  # (T, d)
    return Link("dynamic-context", "C₁", {"source": words(len(H), "h"), "target": ["y"],
                                          "weights": [list(as_tuple(weights))], "H": H})
