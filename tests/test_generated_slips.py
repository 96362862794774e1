"""No generated problem marks a catalogued mistake right.

A part's tolerance exists for a student's rounding; when a mistake's number happens to fall
inside it (two saturated softmax weights, a tanh near ±1), the student who makes the mistake
would be told they were right. ``generate`` redraws such numbers. Here every family's linked
parts, on many seeds, are answered with each mistake's number (the engine run with the
mistake built in, typed to 4 decimals) and must not be marked right.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import mistakes
from tutor.quiz.generators import FAMILIES, UNMARKED_SLIPS, generate

SEEDS = range(12)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_catalogued_mistake_is_marked_right(family):
    for seed in SEEDS:
        for part in generate(family, seed).parts:
            link = part.link
            if link is None or part.kind not in ("number", "vector"):
                continue
            right = np.asarray(mistakes.value_of(link.computation, link.inputs, link.value))
            for m in mistakes.mistakes_for(link.computation, link.value.split("[")[0]):
                if m.id in UNMARKED_SLIPS:
                    continue
                try:
                    wrong = np.asarray(mistakes.value_of(link.computation, link.inputs, link.value,
                                                         (m.id,)))
                except ValueError:
                    continue
                if wrong.shape != right.shape or not np.all(np.isfinite(wrong)):
                    continue
                if np.array_equal(np.round(wrong, 4), np.round(right, 4)):
                    continue  # the same answer at the digits a student types
                typed = ", ".join(f"{x:.4f}" for x in np.ravel(wrong))
                verdict = part.check(typed, diagnose=False)
                assert verdict.correct is not True, (family, seed, part.prompt, m.id, typed)
