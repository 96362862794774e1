"""What a student reads and is marked against in every generated problem and numbered exam
question, as JSON: the interpreted-mode tests build it in two processes and compare. Imports
nothing of the engine at module level (the caller chooses interpreted mode first)."""

from __future__ import annotations

import numpy as np


def _plain(value):
    """An answer as JSON-able numbers and words (arrays become nested lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value


def worked_examples() -> dict:
    """Every generated family on seeds 0-5 and every numbered exam question on seeds 0-2: the
    text a student reads and the numbers it is marked against."""
    from tutor.exam.model import load_questions
    from tutor.exam.paper import instantiate
    from tutor.quiz.generators import FAMILIES, generate

    out = {}
    for family in FAMILIES:
        for seed in range(6):
            p = generate(family, seed)
            out[f"{family}/{seed}"] = {
                "text": [p.prompt, *p.solution, *(part.prompt for part in p.parts)],
                "answers": [_plain(part.answer) for part in p.parts]}
    for spec in load_questions():
        if spec.numbers:
            for seed in range(3):
                q = instantiate(spec, seed)
                out[f"{spec.id}/{seed}"] = {
                    "text": [q.stem, *(line for part in q.parts for line in (part.prompt, *part.model_answer))],
                    "answers": []}
    return out
