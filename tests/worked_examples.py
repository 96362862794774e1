"""What a student reads and is marked against in every generated problem and numbered exam
question, as JSON: the interpreted-mode test builds it in two processes and compares. Imports no
kernel module at module level (the caller chooses interpreted mode first)."""

from __future__ import annotations

from engine.trace import to_jsonable  # numpy only: no kernel module


def _answer(value):
    """A part's answer as JSON (a set of tokens becomes a sorted list)."""
    return to_jsonable(sorted(value) if isinstance(value, (set, frozenset)) else value)


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
                "answers": [_answer(part.answer) for part in p.parts]}
    for spec in load_questions():
        if spec.numbers:
            for seed in range(3):
                q = instantiate(spec, seed)
                out[f"{spec.id}/{seed}"] = {
                    "text": [q.stem, *(line for part in q.parts for line in (part.prompt, *part.model_answer))],
                    "answers": []}
    return out
