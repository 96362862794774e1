"""A day-by-day revision plan that ends on the exam date (``attn-tutor plan --exam DATE``).

Built from four things the progress store knows — FSRS due dates, per-topic mastery, lessons
not yet opened, structured questions not yet sat in a paper — and fitted to a daily time
budget. The same store and the same day always give the same plan; studying changes the
store, so running it again re-plans.

Rules, in order of priority for each day up to the day before the exam:

1. **Reviews**: the cards FSRS has due by that day (projected from their due dates), one
   minute each, at most :data:`REVIEW_SHARE` of the day.
2. **Unread lessons**, in lecture order (:data:`LESSON_MINUTES` each): the lecture's sections
   (:data:`EXAM_LESSONS`), which the exam covers; the Transformer lesson goes beyond the notes.
   Then **recurring mistakes** (catalogued mistakes named at least twice in the student's
   answers): one aimed quiz of :data:`MISTAKES_MINUTES` (``quiz --mode mistakes``) for every
   :data:`MISTAKES_PER_SET` of them, the commonest first.
3. **Weak topics** of those lessons (mastery below :data:`WEAK` or never practised), weakest first: a
   practice set of :data:`PRACTICE_MINUTES` for each.
4. **Papers**: the unattempted structured questions, three to a timed paper of
   :data:`PAPER_MINUTES`, placed no earlier than the lessons they need.
5. **Practice traces** (``attn-tutor trace NAME --practice``): each worked example from its
   level up, study (level 0, :data:`STUDY_MINUTES`) → faded (some steps blank) → solve (every
   step blank), :data:`TRACE_MINUTES` each, one stage a day, after its lesson; a trace already
   solved comes back as a solve when FSRS has it due before the exam.

A task that does not fit today moves to the next day; what fits on no day is reported in
``unplaced``. The last day before the exam holds a mock paper when no paper is left over
and the budget allows.
The exam day itself is listed, with nothing planned. Pure: no terminal, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from tutor.content import LECTURE_SECTIONS, LESSON_IDS
from tutor.exam.model import load_questions
from tutor.limits import PLAN_MINUTES

EXAM_LESSONS = LESSON_IDS[:LECTURE_SECTIONS]
"""The lessons a plan schedules: the sections of the lecture notes."""

LESSON_MINUTES = 20
PRACTICE_MINUTES = 15
STUDY_MINUTES = 5
TRACE_MINUTES = 10
PAPER_MINUTES = 45
MISTAKES_MINUTES = 10
MISTAKES_PER_SET = 3
REVIEW_SHARE = 0.4
WEAK = 0.6
MAX_DAYS = 366


class PlanError(ValueError):
    """The plan cannot be made as asked (one line)."""


@dataclass(frozen=True)
class Task:
    kind: str  # review | lesson | mistakes | practice | paper | mock | trace
    title: str
    minutes: int
    command: str
    topics: tuple[str, ...] = ()
    trace: str = ""
    """A practice trace's name (kind ``trace``)."""


@dataclass(frozen=True)
class Day:
    date: date
    tasks: tuple[Task, ...]
    exam: bool = False

    @property
    def minutes(self) -> int:
        return sum(t.minutes for t in self.tasks)


@dataclass(frozen=True)
class Plan:
    today: date
    exam: date
    minutes_per_day: int
    days: tuple[Day, ...]
    unplaced: tuple[Task, ...] = field(default=())

    def to_dict(self) -> dict:
        return {
            "schema": 1, "today": self.today.isoformat(), "exam": self.exam.isoformat(),
            "minutes_per_day": self.minutes_per_day,
            "days": [{"date": d.date.isoformat(), "exam": d.exam, "minutes": d.minutes,
                      "tasks": [vars(t) | {"topics": list(t.topics)} for t in d.tasks]}
                     for d in self.days],
            "unplaced": [vars(t) | {"topics": list(t.topics)} for t in self.unplaced],
        }


def _papers(unattempted: Sequence[tuple[str, str]]) -> list[Task]:
    """Unattempted (id, section) pairs, three to a paper, in lecture order."""
    order = sorted(unattempted, key=lambda q: (LESSON_IDS.index(q[1]), q[0]))
    out = []
    for i in range(0, len(order), 3):
        group = order[i:i + 3]
        ids = [q for q, _ in group]
        out.append(Task("paper", f"Timed paper: {', '.join(ids)}", PAPER_MINUTES,
                        "attn-tutor paper " + " ".join(f"--question {q}" for q in ids),
                        tuple(dict.fromkeys(s for _, s in group))))
    return out


def _mistakes(recurring: Sequence[tuple[str, str]]) -> list[Task]:
    """One aimed quiz for every :data:`MISTAKES_PER_SET` recurring mistakes."""
    out = []
    for i in range(0, len(recurring), MISTAKES_PER_SET):
        group = recurring[i:i + MISTAKES_PER_SET]
        n = len(group)
        out.append(
            Task(
                "mistakes",
                f"Aimed quiz on {n} recurring mistake{'s' * (n != 1)}: " + "; ".join(t for t, _ in group),
                MISTAKES_MINUTES,
                "attn-tutor quiz --mode mistakes",
                tuple(dict.fromkeys(lesson for _, lesson in group)),
            )
        )
    return out


def _traces(practice: Mapping[str, TracePractice], exam: date) -> list[Task]:
    """The practice-trace tasks: each trace's remaining stages, study → faded → solve, all
    first stages (in lecture order) before any second."""
    stages: list[list[Task]] = [[], [], []]
    for name, p in practice.items():
        todo = []
        if p.level == 0:
            todo.append(Task("trace", f"Practise {name}: study every step (level 0 of {p.top})",
                             STUDY_MINUTES, f"attn-tutor trace {name} --practice --level 0",
                             (p.lesson,), name))
        if p.level < p.top - 1 or (p.level == 0 and p.top > 1):
            todo.append(Task("trace", f"Practise {name}: fill in the last steps (adaptive level)",
                             TRACE_MINUTES, f"attn-tutor trace {name} --practice",
                             (p.lesson,), name))
        if p.level < p.top or (p.due is not None and p.due < exam):
            todo.append(Task("trace", f"Practise {name}: solve it from the inputs (level {p.top})",
                             TRACE_MINUTES, f"attn-tutor trace {name} --practice --level {p.top}",
                             (p.lesson,), name))
        for i, task in enumerate(todo):
            stages[i].append(task)
    return [t for stage in stages for t in stage]


@dataclass(frozen=True)
class TracePractice:
    """What the plan needs to know of one trace's practice."""

    level: int
    top: int
    lesson: str
    due: date | None = None
    """When FSRS wants it practised again (None before any finished practice)."""


def build_plan(exam: date, today: date, minutes_per_day: int, *, due: Iterable[date] = (),
               lessons_read: Iterable[str] = (), mastery: Mapping[str, float | None] | None = None,
               unattempted: Sequence[tuple[str, str]] = (),
               practice: Mapping[str, TracePractice] | None = None,
               mistakes: Sequence[tuple[str, str]] = ()) -> Plan:
    """The plan from plain inputs (see the module docstring).

    Args:
        exam: the exam date; must be after ``today``.
        today: the first planned day.
        minutes_per_day: the daily budget (10–600).
        due: the due date of every scheduled card (overdue ones count on ``today``).
        lessons_read: lesson ids already opened.
        mastery: lesson id → mastery 0–1 (None or missing: never practised).
        unattempted: (question id, lesson id) of structured questions never sat.
        practice: trace name → its practice level, top level, lesson and FSRS due date, for
            the traces to practise (lecture order).
        mistakes: (title, lesson id) of the student's recurring mistakes, commonest first.

    Raises:
        PlanError: for an exam not after today, more than a year away, or a budget outside
            10–600 minutes.
    """
    if exam <= today:
        raise PlanError(f"the exam date {exam.isoformat()} must be after today ({today.isoformat()})")
    if (exam - today).days > MAX_DAYS:
        raise PlanError(f"the exam is {(exam - today).days} days away; plans cover at most {MAX_DAYS}")
    low, high = PLAN_MINUTES
    if isinstance(minutes_per_day, bool) or not isinstance(minutes_per_day, int) \
            or not low <= minutes_per_day <= high:
        raise PlanError(f"minutes per day must be {low}–{high}, got {minutes_per_day!r:.20}")
    traces = dict(practice or {})
    mastery = dict(mastery or {})
    read = set(lessons_read)
    lessons = [Task("lesson", f"Read lesson {LESSON_IDS.index(lid) + 1}: {lid}", LESSON_MINUTES,
                    f"attn-tutor lesson {lid}", (lid,)) for lid in EXAM_LESSONS if lid not in read]
    weak = sorted((lid for lid in EXAM_LESSONS if (mastery.get(lid) or 0.0) < WEAK),
                  key=lambda lid: (mastery.get(lid) or 0.0, LESSON_IDS.index(lid)))
    practise = [Task("practice", f"Practise {lid} (mastery {round(100 * (mastery.get(lid) or 0))}%)",
                     PRACTICE_MINUTES, f"attn-tutor quiz --topic {lid}", (lid,)) for lid in weak]
    queue = (lessons + _mistakes(mistakes) + practise + _papers(unattempted)
             + _traces(traces, exam))
    due_by_day: dict[date, int] = {}
    for d in due:
        key = max(d, today)
        due_by_day[key] = due_by_day.get(key, 0) + 1

    days: list[Day] = []
    carried = 0  # reviews that did not fit yesterday
    n_days = (exam - today).days
    for i in range(n_days):
        day = today + timedelta(days=i)
        left = minutes_per_day
        tasks: list[Task] = []
        reviews = carried + due_by_day.get(day, 0)
        if reviews:
            fit = min(reviews, max(1, int(minutes_per_day * REVIEW_SHARE)))
            carried = reviews - fit
            tasks.append(Task("review", f"Review {fit} due card{'s' * (fit != 1)}", fit,
                              "attn-tutor quiz --mode review"))
            left -= fit
        if i == n_days - 1 and left >= PAPER_MINUTES and not any(t.kind == "paper" for t in queue):
            tasks.append(Task("mock", "Mock paper: 3 questions, 45 minutes", PAPER_MINUTES,
                              "attn-tutor paper"))
            left -= PAPER_MINUTES
        for task in list(queue):
            if task.minutes <= left and _ready(task, queue, tasks):
                tasks.append(task)
                queue.remove(task)
                left -= task.minutes
        days.append(Day(day, tuple(tasks)))
    days.append(Day(exam, (), exam=True))
    if carried:
        queue.insert(0, Task("review", f"Review {carried} more due cards", carried,
                             "attn-tutor quiz --mode review"))
    return Plan(today, exam, minutes_per_day, tuple(days), tuple(queue))


def _ready(task: Task, queue: Sequence[Task], today: Sequence[Task] = ()) -> bool:
    """A paper or a practice trace waits until the lessons of its sections are no longer
    queued; a trace's next stage waits for a day after its last one."""
    if task.kind not in ("paper", "trace"):
        return True
    pending = {t.topics[0] for t in queue if t.kind == "lesson"}
    if pending & set(task.topics):
        return False
    if task.kind == "trace":
        earlier = [t for t in list(queue) + list(today) if t.trace == task.trace]
        return earlier[0] is task and not any(t.trace == task.trace for t in today)
    return True


def plan_from_store(store, exam: date, today: date, minutes_per_day: int, *,
                    attempted: Iterable[str] = ()) -> Plan:
    """Gather the inputs from the progress store and the question files, then plan."""
    from tutor.quiz.bank import load_bank  # looked up per call: tests replace it
    from tutor.quiz.progress import compute  # deferred: loads rich (start-up time)
    from tutor.quiz.recurring import recurring  # deferred: loads rich (start-up time)
    from tutor.store import local_day  # deferred: loads rich (start-up time)
    from tutor.store.practice import trace_of  # deferred: loads rich (start-up time)

    bank = load_bank()
    data = compute(store, bank)
    done = set(attempted)
    return build_plan(
        exam, today, minutes_per_day,
        due=[local_day(c.due) for c in store.cards() if not trace_of(c.question_id)],
        lessons_read=store.lessons_opened(),
        mastery={t["id"]: t["mastery"] if t["seen"] else None for t in data["topics"]},
        unattempted=[(q.id, q.section) for q in load_questions() if q.id not in done],
        practice=trace_practice(store),
        mistakes=[(r.title, r.lesson) for r in recurring(store, bank) if r.recurring],
    )


def trace_practice(store) -> dict[str, TracePractice]:
    """Every trace's practice as the plan needs it, in lecture order."""
    from engine.traces import REGISTRY  # deferred: loads numpy (start-up time)
    from tutor.practice.progress import levels  # deferred: loads rich (start-up time)
    from tutor.store import local_day  # deferred: loads rich (start-up time)
    from tutor.store.practice import item_id  # deferred: loads rich (start-up time)

    cards = {c.question_id: c for c in store.cards()}
    out = {}
    for name, (level, top) in levels(store).items():
        card = cards.get(item_id(name))
        out[name] = TracePractice(level, top, LESSON_IDS[REGISTRY[name].section - 1],
                                  local_day(card.due) if card else None)
    return out


def render_text(plan: Plan, commands: bool = True) -> list[str]:
    """The plan as lines of plain text; ``commands`` adds the command for each task (the TUI
    leaves them out: there, each task is an area of the tutor)."""
    out = [f"Revision plan: {plan.today:%a %d %b} → exam {plan.exam:%a %d %b %Y} "
           f"({(plan.exam - plan.today).days} days, {plan.minutes_per_day} min/day)", ""]
    for d in plan.days:
        if d.exam:
            out.append(f"{d.date:%a %d %b}  EXAM — good luck.")
            continue
        out.append(f"{d.date:%a %d %b}  {d.minutes:>3} min" + ("" if d.tasks else "  (free: mixed practice)"))
        out += [f"    {t.minutes:>3}  {t.title:<58} {t.command}" if commands else
                f"    {t.minutes:>3}  {t.title}" for t in d.tasks]
    if plan.unplaced:
        total = sum(t.minutes for t in plan.unplaced)
        out += ["", f"Did not fit ({len(plan.unplaced)} tasks, {total} min): raise --minutes or "
                "start earlier:"]
        out += [f"    {t.minutes:>3}  {t.title}" for t in plan.unplaced]
    return out


EXAM_SETTING = "exam"
"""Store setting ``{"date": "YYYY-MM-DD", "minutes": N}`` saved by ``attn-tutor plan``."""


def saved_exam(store) -> tuple[date, int] | None:
    """The exam date and daily minutes last set, or None (also when the stored setting is
    malformed: the store checks it on reading, skips it and reports it, and ``attn-tutor
    check`` sets it aside — see ``tutor.store.paper_rows.SETTINGS``)."""
    from tutor.store.papers import get_setting  # deferred: loads rich (start-up time)

    value = get_setting(store, EXAM_SETTING)
    if value is None:
        return None
    return date.fromisoformat(value["date"]), value["minutes"]  # type: ignore[index]


def save_exam(store, exam: date, minutes: int) -> None:
    from tutor.store.papers import set_setting  # deferred: loads rich (start-up time)

    set_setting(store, EXAM_SETTING, {"date": exam.isoformat(), "minutes": int(minutes)})


def today_lines(plan: Plan) -> list[str]:
    """What Home shows: days left and today's tasks."""
    left = (plan.exam - plan.today).days
    head = f"Exam {plan.exam:%a %d %b}: {left} day{'s' * (left != 1)} left."
    today = plan.days[0]
    if not today.tasks:
        return [head, "Nothing planned today: mixed practice keeps it fresh."]
    out = [head + f" Today ({today.minutes} min):"]
    out += [f"  • {t.title} ({t.minutes} min)" for t in today.tasks]
    if plan.unplaced:
        out.append(f"  {len(plan.unplaced)} task(s) do not fit before the exam; raise the daily minutes.")
    return out
