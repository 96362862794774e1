"""Problems aimed at a mistake: numbers on which that mistake and the right method give
different answers at the precision the question asks, so a right answer is evidence the
mistake is gone (``quiz --mode mistakes``, and a share of ``--mode weak``).

For each mistake, a generated family whose computation has the mistake is drawn on fresh
seeds until one of its numeric parts tells the two apart: the mistake's number is outside the
part's tolerance of the right one, and typed to four decimals the catalogue names that
mistake. A linked bank item whose fixed numbers do so is the fallback (when generated
problems are off, or no family carries the mistake). The engine runs here: the modes module
imports this only for the two modes that aim.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

import numpy as np

from engine import mistakes
from tutor.marking import Link
from tutor.quiz.bank import Question
from tutor.quiz.generators import FAMILIES, generate, slip_values
from tutor.quiz.items import Aim, Item, matches
from tutor.render.numbers import value as show

SEEDS_PER_FAMILY = 8
"""Fresh seeds tried on one family before the next is tried."""

LEAST_GAP = 0.005
"""The smallest difference that counts when a part's tolerance is 0 (an exact answer)."""


def differs(link: Link, mistake: str, tolerance: float) -> str | None:
    """What ``mistake`` gives for the linked value, formatted, when it is a different answer
    there (outside ``tolerance`` of the right one, and named by the catalogue when typed to
    four decimals); None when the two cannot be told apart on these numbers."""
    found = slip_values(link, mistake)
    if found is None:
        return None  # not this value's mistake, or nothing a student could type here
    right, wrong = found
    if not np.any(np.abs(wrong - right) > max(tolerance, LEAST_GAP) + 1e-9):
        return None
    typed = np.round(wrong, 4).ravel()
    check = mistakes.diagnose(link.computation, link.inputs, link.value, typed, decimals=4,
                              tolerance=tolerance or None)
    if check.correct or not any(mistake in d.ids for d in check.diagnoses):
        return None
    return show(wrong)


@functools.cache
def _computations(family: str) -> frozenset[str]:
    """The computations a family's numeric parts are linked to (one problem tells)."""
    return frozenset(p.link.computation for p in generate(family, 0).parts if p.link is not None)


def _families(mistake: str, topics: set[str]) -> list[str]:
    """The generated families (on the topics) with a part whose computation has ``mistake``."""
    has = set(mistakes.applies_to(mistake))
    return [f.id for f in FAMILIES.values() if _computations(f.id) & has and (
        not topics or f.section in topics or bool(topics & set(f.exam_topics)))]


def _from_family(mistake: str, family: str, rng: random.Random) -> Item | None:
    for _ in range(SEEDS_PER_FAMILY):
        problem = generate(family, rng.randrange(2**31))
        for i, part in enumerate(problem.parts):
            if part.link is None:
                continue
            gives = differs(part.link, mistake, part.tolerance)
            if gives is not None:
                return Item(problem=problem, aim=Aim(mistake, mistakes.MISTAKES[mistake].title,
                                                     i, gives))
    return None


def _from_bank(mistake: str, bank: Sequence[Question], topics: set[str],
               used: set[str]) -> Item | None:
    title = mistakes.MISTAKES[mistake].title
    for q in bank:
        if q.link is None or q.id in used or not matches(Item(question=q), topics):
            continue
        if q.kind == "mcq" and mistake in q.choice_mistakes:  # a choice that is the mistake
            letter = "abcde"[q.choice_mistakes.index(mistake)]
            return Item(question=q, aim=Aim(mistake, title, 0, f"choice {letter}"))
        gives = differs(q.link, mistake, q.tolerance or 0.0) if q.kind == "fill" else None
        if gives is not None:
            return Item(question=q, aim=Aim(mistake, title, 0, gives))
    return None


def aimed_items(ids: Sequence[str], n: int, *, bank: Sequence[Question], topics: set[str],
                generated: bool, rng: random.Random) -> tuple[list[Item], list[str]]:
    """Up to ``n`` items aimed at the mistakes ``ids`` (commonest first), taken in turn, and
    the ids no problem could be aimed at."""
    picked: list[Item] = []
    missed: list[str] = []
    used: set[str] = set()
    families = {m: _families(m, topics) if generated else [] for m in ids}
    live = list(ids)
    while len(picked) < n and live:
        for mistake in list(live):
            if len(picked) >= n:
                break
            options = families[mistake]
            rng.shuffle(options)
            fresh = [f for f in options if "gen:" + f not in used]
            item = next((it for f in fresh if (it := _from_family(mistake, f, rng))), None)
            if item is None:  # every family seen once already: a bank item, then a family again
                item = _from_bank(mistake, bank, topics, used) or next(
                    (it for f in options if (it := _from_family(mistake, f, rng))), None)
            if item is None:
                live.remove(mistake)
                if not any(it.aim and it.aim.mistake == mistake for it in picked):
                    missed.append(mistake)
                continue
            used.add(item.question_id)
            picked.append(item)
    return picked, missed
