"""The lecture's greedy-vs-beam example (§10) as a table model, with its erratum.

The notes' table::

    step t:       P(the) = 0.4, P(a) = 0.3, P(an) = 0.2, P(some) = 0.1
    after "the":  P(cat) = 0.6, P(dog) = 0.3, ...
    after "a":    P(cat) = 0.1, P(dog) = 0.8, ...

Choices for what the notes leave out ("..."), recorded in :data:`CHOICES`:

- the rest of each row goes to an explicit word ``<other>`` ("some word the notes do not
  list"): 0.1 after "the" and 0.1 after "a";
- "an" and "some" have no continuation in the notes: ``<other>`` with probability 1;
- every sentence ends after its second word: P(</s> | cat) = P(</s> | dog) =
  P(</s> | <other>) = 1. log 1 = 0, so running to ``max_length = 3`` adds ``</s>`` without
  changing any score, and "the cat </s>" and "a dog </s>" (both L = 3) tie under every
  length penalty too.

The erratum: "the cat" = 0.4 · 0.6 and "a dog" = 0.3 · 0.8 are both 0.24, so both
log-probabilities are log 0.24 = -1.4271; the notes print -1.43 against -1.42 because they
rounded log 0.4 and log 0.8 before adding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.decoding.models import TableModel
from engine.trace import Erratum

VOCAB = ("<s>", "</s>", "the", "a", "an", "some", "cat", "dog", "<other>")

ROWS: dict[tuple[str, ...], dict[str, float]] = {
    ("<s>",): {"the": 0.4, "a": 0.3, "an": 0.2, "some": 0.1},
    ("the",): {"cat": 0.6, "dog": 0.3, "<other>": 0.1},
    ("a",): {"cat": 0.1, "dog": 0.8, "<other>": 0.1},
    ("an",): {"<other>": 1.0},
    ("some",): {"<other>": 1.0},
    # cat, dog, <other> (and </s>) are not listed: TableModel.from_rows sends them to </s>
}

CHOICES = (
    "The notes give only cat and dog after \"the\" and \"a\" (\"...\" for the rest): the remaining "
    "0.1 of each row goes to an explicit word \"<other>\".",
    "The notes give no continuation of \"an\" or \"some\": both go to \"<other>\" with probability 1.",
    "Every sentence ends after its second word: P(</s> | cat) = P(</s> | dog) = P(</s> | <other>) = 1, "
    "so ending adds log 1 = 0 to every score.",
)


@dataclass(frozen=True)
class LectureBeamExample:
    """The §10 example: model, settings and errata.

    Attributes:
        model: bigram :class:`TableModel` over :data:`VOCAB` (BOS ``<s>``, EOS ``</s>``).
        beam_width: K = 2, as in the notes.
        max_length: 2 (the notes' two steps); use 3 to let both sentences end with ``</s>``.
        errata: the notes' printed numbers against the computed ones (first: the tie).
        choices: how the parts the notes leave out were filled in.
    """

    model: TableModel
    beam_width: int
    max_length: int
    errata: tuple[Erratum, ...]
    choices: tuple[str, ...]

    @property
    def erratum(self) -> Erratum:
        """The main erratum: -1.43 vs -1.42 is a rounding artefact; both are log 0.24."""
        return self.errata[0]


def lecture_beam_example() -> LectureBeamExample:
    """Build the "the/a/an/some → cat/dog" model of §10 and its errata.

    Returns:
        :class:`LectureBeamExample` with a bigram table model (V = 9), K = 2,
        ``max_length = 2`` and the errata records for the trace.
    """
    model = TableModel.from_rows(VOCAB, ROWS, bos="<s>", eos="</s>")
    l04, l06, l03, l08 = (math.log(p) for p in (0.4, 0.6, 0.3, 0.8))
    l024 = math.log(0.4 * 0.6)
    tie = Erratum(
        where="§10 Worked Example — Greedy vs Beam Search (cumulative log-probabilities)",
        printed="\"the cat\" = -0.92 + (-0.51) = -1.43, \"a dog\" = -1.20 + (-0.22) = -1.42: \"a dog\" wins",
        computed=(f"\"the cat\" = {l04:.4f} + ({l06:.4f}) = {l04 + l06:.4f}, \"a dog\" = {l03:.4f} + "
                  f"({l08:.4f}) "
                  f"= {l03 + l08:.4f}: both are log 0.24 = {l024:.4f} (0.4·0.6 = 0.3·0.8 = 0.24), an exact "
                  "tie"),
        why=(f"rounding: log 0.4 = {l04:.3f} and log 0.8 = {l08:.3f} were rounded to -0.92 and -0.22 "
             "before adding, which split the tie by 0.01; the engine reports the tie and orders it by "
             "its tie rule (\"the cat\" first: its parent \"the\" ranks first in the beam)"),
    )
    verdict = Erratum(
        where="§10 Worked Example — Greedy vs Beam Search (conclusion)",
        printed="\"a dog\" comes out a little ahead, so beam search finds a sentence that greedy misses",
        computed=(f"greedy decodes \"the cat\" with probability 0.24 (log {l024:.4f}), the same as \"a "
                  "dog\": "
                  "beam search keeps an equally good alternative alive, not a better one"),
        why="follows from the tie: with the exact numbers neither sentence is more probable",
    )
    return LectureBeamExample(model, 2, 2, (tie, verdict), CHOICES)
