"""What to ask: one :class:`Item` type for bank questions and generated problems, and the six
ways of choosing items (practice, review, weak spots, retry incorrect, mock exam, mistakes).

Selection rules (all honour ``topics`` and ``generated``; ``seed`` fixes every random choice):

* **practice** — a shuffled sample of the matching items.
* **review** — cards due now under FSRS, most overdue first; then items never seen, in lecture
  order, until ``count`` is reached.
* **weak** — items with history, weakest first: weakness = ½(1 − retrievability) + ½·(share of
  graded answers that were wrong); a quarter of the session (at least one item) goes to
  problems aimed at the student's recurring mistakes, when there are any.
* **retry** — items whose latest graded answer was wrong, most recent first; a generated
  problem comes back with the same numbers.
* **mock** — a balanced sample across the lesson topics (round robin), self-graded items left
  out so the score is objective; answers are saved but the schedule is not touched.
* **mistakes** — problems aimed at the mistakes the student has made (recurring ones first,
  :mod:`tutor.quiz.recurring`), each on numbers where that mistake and the right method give
  different answers at the precision asked (:mod:`tutor.quiz.aimed`), so a right answer is
  evidence the mistake is gone. Each item carries its :class:`~tutor.quiz.items.Aim`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from engine.mistakes.catalogue import MISTAKES  # the records only: no NumPy, no traces
from tutor.errors import UserError
from tutor.limits import MAX_MINUTES, shorten
from tutor.names import did_you_mean, find, resolve
from tutor.quiz.bank import EXAM_TOPICS, SECTIONS, Question
from tutor.quiz.generators import FAMILIES, generate, question_id
from tutor.quiz.items import Item, matches
from tutor.quiz.recurring import recurring

if TYPE_CHECKING:
    from fsrs import Scheduler

    from tutor.quiz.generators import Problem
    from tutor.store import Store

MODE_TITLES: dict[str, str] = {
    "practice": "Practice — pick sections or topics",
    "review": "Review — cards due today (spaced repetition)",
    "weak": "Weak spots — lowest recall, most missed",
    "retry": "Retry incorrect — questions you last got wrong",
    "mock": "Mock exam — timed, scored per topic",
    "mistakes": "Mistakes — problems aimed at the mistakes you make",
}
"""Each mode with the line the TUI's setup form and the command palette show for it."""
MODES = tuple(MODE_TITLES)


def mode_name(mode: str) -> str:
    """The mode as a student reads it: ``Practice``, ``Mock exam``, ``Retry incorrect``."""
    return MODE_TITLES[mode].split(" — ")[0] if mode in MODE_TITLES else mode.capitalize()

DEFAULT_COUNT = {"practice": 10, "review": 20, "weak": 10, "retry": 10, "mock": 12, "mistakes": 8}
WEAK_AIMED = 0.25
"""The share of a weak-spots session aimed at recurring mistakes (at least one item)."""
MOCK_SECONDS_PER_QUESTION = 120.0


def time_limit_s(mode: str, n_items: int, minutes: float | None = None) -> float | None:
    """Seconds allowed: ``minutes`` when given, else 2 minutes a question in a mock exam, else
    no limit."""
    if minutes is not None:
        check_minutes(minutes)
        return minutes * 60
    return MOCK_SECONDS_PER_QUESTION * n_items if mode == "mock" else None


@dataclass(frozen=True)
class QuizStart:
    """The quiz a front end should set up (or start at once, ``autostart``): what
    ``attn-tutor quiz`` asked for, handed to the TUI's quiz screen."""

    mode: str = "practice"
    topics: tuple[str, ...] = ()
    count: int | None = None
    minutes: float | None = None
    seed: int | None = None
    generated: bool = True
    autostart: bool = False


@dataclass
class Selection:
    items: list[Item]
    note: str = ""
    """Why the list is short or empty, for the UI to show."""
    seed: int = 0


def resolve_topics(raw: Iterable[str]) -> set[str]:
    """``--topic`` values → lesson ids and exam-topic ids (numbers 1–13 name sections).

    Raises:
        UserError: for a name that is neither, listing the valid ones.
    """
    out: set[str] = set()
    topics = list(SECTIONS) + list(EXAM_TOPICS)
    for name in raw:
        t = name.strip()
        if t.isdecimal() and t.isascii() and len(t) <= 3 and 1 <= int(t) <= len(SECTIONS):
            out.add(SECTIONS[int(t) - 1])
            continue
        found = find(t, topics) or find("exam-" + t, EXAM_TOPICS)
        if found is None:
            raise UserError(f"--topic {shorten(name)}: not a lesson or exam topic."
                            f"{did_you_mean(t, topics)} Expected a lesson id (encoder-decoder … "
                            f"training), a section number 1–{len(SECTIONS)} or an exam topic "
                            "(exam-scaled-dot …); `attn-tutor lesson` lists the lessons")
        out.add(found)
    return out


def resolve_mode(name: str) -> str:
    """``--mode`` in any case; ``UserError`` with "did you mean …" otherwise."""
    return resolve(name, MODES, "quiz mode", "Expected one of " + ", ".join(MODES) + ".")


def check_minutes(minutes: float | None) -> None:
    """A time limit must be a number of minutes above 0 and at most ``MAX_MINUTES``."""
    if minutes is not None and not 0 < minutes <= MAX_MINUTES:  # NaN fails both comparisons
        raise UserError(f"time limit {minutes:g} minutes: expected more than 0 and at most "
                        f"{MAX_MINUTES:g} (ten hours)")


def pool(bank: Sequence[Question], topics: set[str], *, generated: bool, seed: int) -> list[Item]:
    """Every matching item in lecture order; generated families get a seed from ``seed``."""
    items = [Item(question=q) for q in bank]
    if generated:
        rng = random.Random(seed)
        for fam in FAMILIES:
            items.append(Item(problem=_lazy(fam, rng.randrange(2**31))))
    order = {s: i for i, s in enumerate(SECTIONS)}
    items = [it for it in items if matches(it, topics)]
    return sorted(items, key=lambda it: order.get(it.section, len(order)))  # stable


class _LazyProblem:
    """A generated problem made on first use, so listing a pool does not import the engine."""

    def __init__(self, family: str, seed: int):
        fam = FAMILIES[family]
        self.family, self.seed = family, seed
        self.question_id, self.section, self.exam_topics = question_id(family), fam.section, fam.exam_topics
        self.title = fam.title
        self._real: Problem | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never build the problem for copy/pickle probes
            raise AttributeError(name)
        if self._real is None:
            self._real = generate(self.family, self.seed)
        return getattr(self._real, name)



def _lazy(family: str, seed: int) -> Problem:
    """Problem ``seed`` of ``family``, built when a field beyond its listing is first read."""
    return cast("Problem", _LazyProblem(family, seed))  # it stands in for the Problem it builds


def select(mode: str, *, bank: Sequence[Question], store: Store, topics: Set[str] = frozenset(),
           count: int | None = None, seed: int | None = None, generated: bool = True,
           now: datetime | None = None, scheduler: Scheduler | None = None) -> Selection:
    """Choose the items for a session (see the module docstring for each mode's rule)."""
    if mode not in MODES:
        raise UserError(f"--mode {mode!r}: expected one of {', '.join(MODES)}")
    if count is not None and count < 1:
        raise UserError(f"--count {count}: expected a whole number >= 1")
    n = count or DEFAULT_COUNT[mode]
    seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
    rng = random.Random(seed)
    now = now or store.now()
    items = pool(bank, set(topics), generated=generated, seed=seed)
    by_id = {it.question_id: it for it in items}
    where = " in the chosen topics" if topics else ""

    if mode == "practice":
        rng.shuffle(items)
        return Selection(items[:n], "" if items else f"No questions{where}.", seed)

    if mode == "mock":
        groups: dict[str, list[Item]] = {}
        for it in items:
            if not it.self_graded:
                groups.setdefault(it.section, []).append(it)
        for g in groups.values():
            rng.shuffle(g)
        sections = list(groups)
        rng.shuffle(sections)
        picked: list[Item] = []
        while len(picked) < n and any(groups.values()):
            for s in sections:
                if groups[s] and len(picked) < n:
                    picked.append(groups[s].pop())
        return Selection(picked, "" if picked else f"No auto-graded questions{where}.", seed)

    if mode == "review":
        due = [by_id[c.question_id] for c in store.due_cards(now) if c.question_id in by_id]
        seen = {c.question_id for c in store.cards()}
        new = [it for it in items if it.question_id not in seen]
        picked = (due + new)[:n]
        note = "" if picked else _next_due_note(store, by_id)
        if picked and not due:
            note = "Nothing is due; here are questions you have not seen yet."
        return Selection(picked, note, seed)

    if mode == "weak":
        # deferred: loads fsrs (start-up time)
        from tutor.quiz.scheduler import make_scheduler, retrievability

        sch = scheduler or make_scheduler()
        misses = store.miss_counts()
        cards = {c.question_id: c.card for c in store.cards()}
        scored = []
        for qid in by_id:
            attempts, wrong = misses.get(qid, (0, 0))
            if attempts == 0 and qid not in cards:
                continue
            r = retrievability(cards.get(qid), now, sch)
            miss = wrong / attempts if attempts else 0.0
            scored.append((0.5 * (1 - r) + 0.5 * miss, qid))
        scored.sort(key=lambda t: (-t[0], t[1]))
        again = [r.id for r in recurring(store, bank) if r.recurring]
        aimed: list[Item] = []
        if again and scored:
            from tutor.quiz.aimed import aimed_items  # the engine runs only when there is an aim

            aimed, _ = aimed_items(again, max(1, round(n * WEAK_AIMED)), bank=bank,
                                   topics=set(topics), generated=generated, rng=rng)
        picked = [by_id[q] for _, q in scored[:n - len(aimed)]] + aimed
        return Selection(picked, "" if picked else
                         f"No history yet{where}: weak spots come from questions you have "
                         "answered. Try practice or review first.", seed)

    if mode == "mistakes":
        named = [r.id for r in recurring(store, bank)]  # recurring ones come first
        if not named:
            return Selection([], "No mistakes named yet: when a wrong number is one the mistake "
                                 "catalogue explains, it is kept, and this mode aims problems at "
                                 "it. Try practice or a paper first.", seed)
        from tutor.quiz.aimed import aimed_items  # the engine runs only in the modes that aim

        picked, missed = aimed_items(named, n, bank=bank, topics=set(topics),
                                     generated=generated, rng=rng)
        note = "" if picked else f"No problem{where} can tell your mistakes from the right method."
        if picked and missed:
            note = ("No problem" + where + " is aimed at: " + ", ".join(
                MISTAKES[m].title for m in missed[:3]) + (" …" if len(missed) > 3 else "")
                + " (practise their traces instead: attn-tutor stats lists them).")
        return Selection(picked, note, seed)

    # retry
    latest = sorted((a for a in store.latest_answers().values()
                     if a.correct is False and a.question_id in by_id),
                    key=lambda a: a.id, reverse=True)
    picked = []
    for a in latest[:n]:
        it = by_id[a.question_id]
        if it.problem is not None and a.variant is not None:
            it = Item(problem=_lazy(it.problem.family, int(a.variant)))  # the same numbers again
        picked.append(it)
    return Selection(picked, "" if picked else f"Nothing to retry{where}: no question's latest "
                     "answer is wrong.", seed)


def _next_due_note(store: Store, by_id: dict[str, Item]) -> str:
    upcoming = [c for c in store.cards() if c.question_id in by_id]
    if not upcoming:
        return "No questions in the chosen topics."
    first = min(upcoming, key=lambda c: c.due)
    return f"Nothing is due. The next card is due {first.due.astimezone():%a %d %b %H:%M}."
