"""Generated numeric problems: exam-style calculations with fresh, hand-computable numbers.

Each *family* makes one kind of problem from a seed; the same (family, seed) always gives the
same numbers. The answers are computed by the engine; each part states its tolerance; each
problem carries a short worked solution and the ``attn-tutor trace`` command that replays it.

The table below is plain metadata, so listing families imports neither numpy nor numba; the
maker modules load on first use.

API: :data:`FAMILIES`, :func:`generate` ``(family, seed) -> Problem``, :func:`family_of`
``(question_id)``, and :class:`Problem` / :class:`Part` (``Part.check(text) -> Verdict``).
"""

from __future__ import annotations

import importlib
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tutor.marking import Link
from tutor.quiz.generators._base import Part, Problem, question_id

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FAMILIES", "Family", "Part", "Problem", "family_of", "generate", "question_id"]


@dataclass(frozen=True)
class Family:
    id: str
    title: str
    section: str
    exam_topics: tuple[str, ...]
    trace: str
    module: str

    @property
    def question_id(self) -> str:
        return question_id(self.id)


_TABLE = [
    # id, title, lesson id, exam topics, trace, maker module
    ("rnn-step", "One RNN encoder step", "encoder-decoder", ("exam-encoder-decoder",), "encoder", "training"),
    (
        "fixed-context",
        "Fixed context vector C = H_T",
        "context-vector",
        ("exam-bottleneck", "exam-encoder-decoder"),
        "encoder",
        "revision",
    ),
    (
        "error-cascade",
        "Teacher forcing vs free running: the error cascade",
        "teacher-forcing",
        ("exam-teacher-forcing",),
        "error-cascade",
        "revision",
    ),
    (
        "context-vector",
        "Dynamic context vector",
        "attention-intro",
        ("exam-attention",),
        "dynamic-context",
        "attention",
    ),
    (
        "self-attention-row",
        "One self-attention output row",
        "self-attention",
        ("exam-self-vs-cross", "exam-qkv"),
        "qkv",
        "attention",
    ),
    (
        "multi-head-shapes",
        "Multi-head shapes and parameter counts",
        "self-attention",
        ("exam-qkv", "exam-self-vs-cross"),
        "multi-head-cost",
        "revision",
    ),
    (
        "cross-attention-weights",
        "Cross-attention weights",
        "cross-attention",
        ("exam-self-vs-cross",),
        "cross-attention",
        "revision",
    ),
    ("masked-softmax", "Masked softmax", "self-attention", ("exam-self-vs-cross",), "masking", "scoring"),
    (
        "multi-head-cost",
        "Multi-head attention FLOPs and Table 1",
        "self-attention",
        ("exam-self-vs-cross",),
        "multi-head-cost",
        "derivations",
    ),
    ("scaled-dot-scores", "Scaled dot-product scores", "scoring", ("exam-scaled-dot",), "scores", "scoring"),
    (
        "softmax-weights",
        "Softmax attention weights",
        "scoring",
        ("exam-attention",),
        "temperature",
        "scoring",
    ),
    (
        "additive-score",
        "Additive (Bahdanau) score",
        "scoring",
        ("exam-attention",),
        "scoring-compare",
        "scoring",
    ),
    ("dot-variance", "Var(q·k) and the √d_k scale", "scoring", ("exam-scaled-dot",), "scaling", "scoring"),
    (
        "softmax-jacobian",
        "The softmax Jacobian",
        "scoring",
        ("exam-scaled-dot",),
        "softmax-jacobian",
        "scoring",
    ),
    (
        "additive-backward",
        "Gradients of additive attention",
        "scoring",
        ("exam-attention",),
        "additive-backward",
        "derivations",
    ),
    ("pooling", "Max, mean and attention pooling", "pooling", ("exam-attention",), "pooling", "attention"),
    (
        "heatmap-reading",
        "Reading an attention heatmap",
        "visualisation",
        ("exam-attention",),
        "heatmap-reading",
        "revision",
    ),
    (
        "beam-search",
        "Beam search: cumulative scores and winner",
        "decoding",
        ("exam-decoding",),
        "greedy-vs-beam",
        "decoding",
    ),
    (
        "length-normalised-beam",
        "Length-normalised beam score",
        "decoding",
        ("exam-decoding",),
        "beam-search",
        "decoding",
    ),
    ("top-k-set", "Top-k filtering", "decoding", ("exam-decoding",), "top-k", "decoding"),
    ("nucleus-set", "Nucleus (top-p) set", "decoding", ("exam-decoding",), "nucleus", "decoding"),
    ("temperature", "Softmax with temperature", "decoding", ("exam-decoding",), "temperature", "decoding"),
    (
        "cross-entropy-loss",
        "Sequence cross-entropy loss",
        "training",
        ("exam-cross-entropy",),
        "cross-entropy",
        "training",
    ),
    (
        "cross-entropy-gradient",
        "Gradient of cross-entropy w.r.t. the logits",
        "training",
        ("exam-cross-entropy",),
        "cross-entropy",
        "training",
    ),
    (
        "attention-backward",
        "Backpropagation through one attention row",
        "training",
        ("exam-qkv", "exam-cross-entropy"),
        "attention-backward",
        "derivations",
    ),
    (
        "distance-scores",
        "Distance-based scores −‖q − k‖²",
        "scoring",
        ("exam-attention",),
        "distance-scores",
        "variants",
    ),
    ("query-design", "Designing a query: one key or two", "qkv", ("exam-qkv",), "scores", "variants"),
]

FAMILIES: dict[str, Family] = {
    row[0]: Family(row[0], row[1], row[2], row[3], row[4], "tutor.quiz.generators." + row[5])
    for row in _TABLE
}


def family_of(qid: str) -> Family | None:
    """The family behind a ``"gen:<family>"`` question id, or None."""
    return FAMILIES.get(qid[4:]) if qid.startswith("gen:") else None


DRAWS = 12
"""Draws a problem gets before its numbers are kept even though a slip passes on them."""

UNMARKED_SLIPS = frozenset({"rounded-intermediates"})
"""Slips a tolerance exists to accept: rounding the steps is how a student works by hand."""


def slip_values(link: Link, mistake: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The linked value done right and with ``mistake`` built in; None when the mistake does
    not apply there or gives nothing a student could type as this answer (another shape,
    an infinity or NaN)."""
    import numpy as np  # deferred: loads numpy (start-up time)

    from engine import mistakes  # deferred: loads the engine (start-up time)

    try:
        right = mistakes.value_of(link.computation, link.inputs, link.value)
        wrong = mistakes.value_of(link.computation, link.inputs, link.value, (mistake,))
    except ValueError:
        return None
    if wrong.shape != right.shape or not np.all(np.isfinite(wrong)):
        return None
    return right, wrong


def slip_passes(part: Part) -> bool:
    """True when a catalogued mistake gives a different number for ``part`` that is still
    within its tolerance of the right one: a student making it would be marked right."""
    import numpy as np  # deferred: loads numpy (start-up time)

    from engine import mistakes  # deferred: loads the engine (start-up time)

    link = part.link
    if link is None or part.kind not in ("number", "vector"):
        return False
    for m in mistakes.mistakes_for(link.computation, link.value.split("[")[0]):
        found = slip_values(link, m.id) if m.id not in UNMARKED_SLIPS else None
        if found is None:
            continue
        gap = np.abs(found[1] - found[0])
        if np.any(gap > 1e-9) and np.all(gap <= (part.tolerance or 0.0) + 1e-12):
            return True
    return False


def generate(family: str, seed: int) -> Problem:
    """A problem of ``family`` made from ``seed`` (reproducible).

    Raises:
        ValueError: for an unknown family.
    """
    import numpy as np  # deferred: loads numpy (start-up time)

    try:
        fam = FAMILIES[family]
    except KeyError:
        raise ValueError(f"no generated family {family!r}; expected one of: "
                         + ", ".join(FAMILIES)) from None
    seed = int(seed)
    rng = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(family.encode())])
    maker = getattr(importlib.import_module(fam.module), "make_" + family.replace("-", "_"))
    for _ in range(DRAWS):  # numbers on which no catalogued slip passes for right
        spec = maker(rng)
        spec["parts"] = tuple(  # each numeric part diagnosed on the problem's own numbers
            replace(p, link=Link(fam.trace, p.value, spec["trace_inputs"])) if p.value and p.link is None
            else p for p in spec["parts"])
        if not any(slip_passes(p) for p in spec["parts"]):
            break
    return Problem(family=family, seed=seed, title=fam.title, section=fam.section,
                   exam_topics=fam.exam_topics, trace=fam.trace, **spec)
