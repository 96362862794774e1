"""A quiz session: the state machine both quiz front ends drive (``--plain`` and the TUI),
plus the ratings they share (the ``:hint``/``:skip``/``:quit`` words are
:data:`tutor.marking.COMMAND_WORDS`, shared with exam papers).

Driving it::

    session = QuizSession(selection.items, store=store, mode="practice")
    while (item := session.next()) is not None:     # None: no more items (or time is up)
        show(item.setup)
        while True:
            ask = session.ask                        # the current part: prompt, instructions
            fb = session.submit(read(ask))           # Feedback
            if not fb.valid:                         # not an answer: show fb.hint, ask again
                continue
            if fb.needs_rating:                      # self-graded: show fb.expected/key points,
                fb = session.rate(read_rating())     # then the student's Again/Hard/Good/Easy
            if fb.done:
                break                                # fb.correct, fb.verdicts, fb.explanation...
    summary = session.finish()

``submit`` and ``rate`` return only after the answer is committed to the store, so a UI that
prints "correct"/"wrong" from the feedback shows only saved answers (``fb.saved`` is False,
with ``fb.error``, if the write failed). A multi-part problem reveals nothing until its last
part is in; then each part is marked on its own, as papers do: ``fb.verdicts`` holds one
verdict per part (a wrong number with the catalogued mistakes that give it, ``diagnoses``,
which the store keeps with the answer), ``fb.score`` the share right, ``fb.correct`` whether all were, and the
schedule is rated from the share (:func:`tutor.quiz.ratings.rating_for_score`: all right
Good, at least half Hard, fewer Again); the store keeps each part's mark. In a mock exam ``fb.reveal`` is
False (say "recorded", not "correct"), answers are
saved without touching the schedule, and once the time limit has passed ``submit`` refuses
further answers (``fb.expired``) and ``next`` returns None. ``skip`` moves on without saving;
``finish`` may be called at any point (end of input, Ctrl-C) and is idempotent.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from tutor.inputs import TraceLink
from tutor.marking import Named, Verdict
from tutor.quiz.items import Aim, Ask, Item
from tutor.quiz.ratings import RATINGS
from tutor.store import StoreError

if TYPE_CHECKING:
    from fsrs import Scheduler

    from tutor.store import Store



@dataclass(frozen=True)
class Feedback:
    """What happened to the last ``submit``/``rate``."""

    valid: bool = True
    hint: str | None = None
    done: bool = False
    """The item is finished and saved (or failed to save: see ``saved``)."""
    needs_rating: bool = False
    correct: bool | None = None
    reveal: bool = True
    """False in a mock exam: do not show right/wrong until the end."""
    verdicts: tuple[Verdict, ...] = ()
    expected: tuple[str, ...] = ()
    """The answer of each part (the model answer for a self-graded item)."""
    explanation: tuple[str, ...] = ()
    key_points: tuple[str, ...] = ()
    trace: TraceLink | None = None
    """The trace that works the item through (a generated problem's: on its numbers)."""
    rating: int | None = None
    due: datetime | None = None
    """When the schedule will ask this item again."""
    saved: bool = True
    error: str | None = None
    expired: bool = False
    aim: Aim | None = None
    """The mistake the item was aimed at (mistakes mode, part of weak spots)."""

    @property
    def aim_line(self) -> str:
        """After an aimed item: what the mistake would have given, and what the answer shows."""
        a = self.aim
        if a is None or self.correct is None or not self.reveal:
            return ""
        where = f" in part ({chr(97 + a.part)})" if len(self.verdicts) > 1 else ""
        v = self.verdicts[a.part] if a.part < len(self.verdicts) else None
        if v is not None and v.correct:
            return (f"Aimed at a mistake you have made, {a.title}: it gives {a.value}{where}; "
                    "you did not make it this time.")
        if v is not None and any(a.mistake in n.ids for n in v.diagnoses):
            return f"Aimed at a mistake you have made, {a.title}{where}: it is still there."
        return f"Aimed at a mistake you have made, {a.title}: it gives {a.value}{where}."

    @property
    def trace_command(self) -> str | None:
        """:attr:`trace` as the command a student can paste into a shell."""
        return self.trace.command if self.trace else None

    @property
    def score(self) -> float | None:
        """The share of parts right (None for a self-graded item or before marking)."""
        return _score(self.verdicts) if self.correct is not None else None

    @property
    def partly(self) -> bool:
        """Some parts of a multi-part item were right and some not."""
        return self.score is not None and 0 < self.score < 1


@dataclass
class Result:
    question_id: str
    section: str
    correct: bool | None
    rating: int | None
    response: str
    expected: tuple[str, ...]
    saved: bool
    label: str = ""
    """How a summary names the item (:attr:`Item.label`): never the stored id."""
    parts: tuple[bool, ...] = ()
    """Whether each part was right (empty for a self-graded item)."""
    responses: tuple[str, ...] = ()
    """What the student typed, part by part."""
    explanation: tuple[str, ...] = ()
    """The item's explanation (shown when a mock exam is reviewed)."""
    diagnoses: tuple[Named, ...] = ()
    """The catalogued mistakes named in its parts' numbers (a mock exam shows them at the end)."""

    @property
    def score(self) -> float | None:
        """The share of parts right; None when self-graded."""
        if self.correct is None:
            return None
        return sum(self.parts) / len(self.parts) if self.parts else float(self.correct)


@dataclass
class Summary:
    mode: str
    seed: int | None
    total: int
    """Items in the session."""
    results: list[Result] = field(default_factory=list)
    skipped: int = 0
    status: str = "finished"
    """finished | stopped (ended early) | timed-out."""
    seconds: float = 0.0
    mock_id: int | None = None
    exam_per_topic: dict[str, list[int]] = field(default_factory=dict)
    """Mock exams: ``{lesson id: [correct, questions]}``, unanswered questions counted."""

    @property
    def answered(self) -> int:
        return len(self.results)

    @property
    def graded(self) -> int:
        return sum(r.correct is not None for r in self.results)

    @property
    def correct(self) -> int:
        """Items with every part right."""
        return sum(bool(r.correct) for r in self.results)

    @property
    def score(self) -> float:
        """Marks over the graded items, a multi-part item counting the share of its parts right."""
        return sum(r.score or 0.0 for r in self.results)

    @property
    def partly(self) -> int:
        """Graded items that were partly right (some parts right, not all)."""
        return sum(1 for r in self.results if r.score is not None and 0 < r.score < 1)

    @property
    def unsaved(self) -> int:
        return sum(not r.saved for r in self.results)

    def mistakes(self) -> list[tuple[Named, int]]:
        """The catalogued mistakes named in this session's answers, each once with how many
        times, commonest first."""
        seen: dict[str, list] = {}
        for r in self.results:
            for n in r.diagnoses:
                seen.setdefault(n.id, [n, 0])[1] += 1
        return sorted(((n, k) for n, k in seen.values()), key=lambda t: -t[1])

    def exam_scores(self) -> dict[str, list[float]]:
        """Mock exams: ``{lesson id: [score, questions]}``, unanswered questions counted and a
        partly right problem adding the share of its parts (:attr:`exam_per_topic` keeps the
        whole-item counts the store holds)."""
        out: dict[str, list[float]] = {t: [0, n] for t, (_, n) in self.exam_per_topic.items()}
        for r in self.results:
            if r.section in out:
                out[r.section][0] += r.score or 0.0
        return out

    def per_topic(self) -> dict[str, list[float]]:
        """``{lesson id: [score, graded]}``: a partly right item adds the share of its parts."""
        out: dict[str, list[float]] = {}
        for r in self.results:
            if r.score is not None:
                cell = out.setdefault(r.section, [0, 0])
                cell[0] += r.score
                cell[1] += 1
        return out


class QuizSession:
    """See the module docstring."""

    def __init__(self, items: Sequence[Item], *, store: Store, mode: str,
                 scheduler: Scheduler | None = None, time_limit_s: float | None = None,
                 seed: int | None = None, now: Callable[[], datetime] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.items = list(items)
        self.store = store
        self.mode = mode
        self.seed = seed
        self.time_limit_s = time_limit_s
        self._now = now or store.now
        self._clock = clock
        self._scheduler = scheduler
        self.session_id = uuid.uuid4().hex[:12]
        self._index = -1
        self._part = 0
        self._responses: list[str] = []
        self._verdicts: list[Verdict] = []
        self._awaiting_rating = False
        self._started = clock()
        self._item_started = self._started
        self._summary = Summary(mode=mode, seed=seed, total=len(self.items))
        self._finished = False
        self._done_index = -1
        self.mock_id: int | None = None
        if mode == "mock":
            try:
                self.mock_id = store.start_mock(len(self.items), time_limit_s, seed, at=self._now())
            except StoreError:
                self.mock_id = None
            self._summary.mock_id = self.mock_id

    # ------------------------------------------------------------------ where we are

    @property
    def current(self) -> Item | None:
        return self.items[self._index] if 0 <= self._index < len(self.items) else None

    @property
    def position(self) -> tuple[int, int]:
        """(1-based number of the current item, number of items)."""
        return self._index + 1, len(self.items)

    @property
    def part(self) -> int:
        return self._part

    @property
    def ask(self) -> Ask:
        return self._item().asks[self._part]

    def _item(self) -> Item:
        """The current item (a session that has none is being driven out of order)."""
        item = self.current
        if item is None:
            raise RuntimeError("no question is waiting; call next()")
        return item

    @property
    def awaiting_rating(self) -> bool:
        return self._awaiting_rating

    @property
    def reveal(self) -> bool:
        return self.mode != "mock"

    def time_left(self) -> float | None:
        """Seconds left in a timed session (never negative), or None without a limit."""
        if self.time_limit_s is None:
            return None
        return max(0.0, self.time_limit_s - (self._clock() - self._started))

    @property
    def expired(self) -> bool:
        left = self.time_left()
        return left is not None and left <= 0

    # ------------------------------------------------------------------ moving on

    def next(self) -> Item | None:
        """Move to the next item; None when there is none left or the time is up."""
        if self._finished or self.expired:
            return None
        if self.current is not None and self._pending():
            self._summary.skipped += 1
        self._index += 1
        self._part = 0
        self._responses, self._verdicts = [], []
        self._awaiting_rating = False
        self._item_started = self._clock()
        return self.current

    def _pending(self) -> bool:
        """The current item was started but not saved."""
        return self._done_index != self._index

    def skip(self) -> None:
        """Leave the current item unanswered (nothing is saved); call :meth:`next` after."""
        if self.current is not None and self._pending():
            self._summary.skipped += 1
            self._done_index = self._index

    # ------------------------------------------------------------------ answering

    def submit(self, text: str) -> Feedback:
        """Mark the answer to the current part; save the item when its last part is in."""
        item = self.current
        if item is None or self._done_index == self._index:
            raise RuntimeError("no question is waiting for an answer; call next()")
        if self._awaiting_rating:
            raise RuntimeError("this item waits for a self-rating; call rate()")
        if self.expired:
            return Feedback(valid=False, expired=True, hint="Time is up.")
        verdict = item.check(self._part, text)
        if not verdict.valid:
            return Feedback(valid=False, hint=verdict.hint)
        self._responses.append(text.strip())
        self._verdicts.append(verdict)
        if self._part + 1 < len(item.asks):
            self._part += 1
            return Feedback(valid=True, reveal=self.reveal)
        if item.self_graded:
            self._awaiting_rating = True
            return Feedback(valid=True, needs_rating=True, expected=(verdict.expected,),
                            key_points=item.key_points, explanation=item.explanation,
                            reveal=True)
        return self._save(item, correct=all(v.correct for v in self._verdicts), rating=None)

    def rate(self, rating: int) -> Feedback:
        """The student's own grade (1 Again, 2 Hard, 3 Good, 4 Easy) for a self-graded item."""
        if not self._awaiting_rating:
            raise RuntimeError("no self-graded answer is waiting for a rating")
        if int(rating) not in RATINGS:
            raise ValueError(f"rating: expected 1-4 (Again, Hard, Good, Easy), got {rating!r}")
        self._awaiting_rating = False
        return self._save(self._item(), correct=None, rating=int(rating))

    def _save(self, item: Item, *, correct: bool | None, rating: int | None) -> Feedback:
        from tutor.quiz import scheduler as sch  # deferred: loads fsrs (start-up time)

        mock = self.mode == "mock"
        parts = tuple(bool(v.correct) for v in self._verdicts) if correct is not None else ()
        if rating is None and not mock:
            rating = int(sch.rating_for(_score(self._verdicts)))
        update = None
        if rating is not None and not mock:
            self._scheduler = self._scheduler or sch.make_scheduler()
            update = sch.updater(item.question_id, rating, self._scheduler)
        at = self._now()
        saved, error, due = True, None, None
        try:
            self.store.record_answer(
                item.question_id, item.section, correct=correct, rating=None if mock else rating,
                response=" | ".join(self._responses), mode=self.mode, variant=item.variant,
                seconds=round(self._clock() - self._item_started, 3), session=self.session_id,
                mock_id=self.mock_id, at=at, update_card=update,
                parts=parts if len(parts) > 1 else None,
                diagnoses=[n.id for v in self._verdicts for n in v.diagnoses])
        except StoreError as exc:
            saved, error = False, str(exc)
        if saved and not mock:
            try:  # the answer is committed: a failed read of its new due date changes nothing
                card = self.store.card(item.question_id)
                due = card.due if card else None
            except StoreError:
                pass
        self._done_index = self._index
        expected = tuple(v.expected for v in self._verdicts)
        self._summary.results.append(Result(
            item.question_id, item.section, correct, rating, " | ".join(self._responses), expected,
            saved, item.label, parts, tuple(self._responses), tuple(item.explanation),
            tuple(n for v in self._verdicts for n in v.diagnoses)))
        return Feedback(valid=True, done=True, correct=correct, reveal=not mock,
                        verdicts=tuple(self._verdicts), expected=expected,
                        explanation=item.explanation, key_points=item.key_points,
                        trace=item.trace_link, rating=rating, due=due,
                        saved=saved, error=error, aim=item.aim)

    # ------------------------------------------------------------------ the end

    def finish(self, status: str | None = None) -> Summary:
        """End the session (idempotent). ``status`` defaults to finished / timed-out / stopped."""
        if self._finished:
            return self._summary
        self._finished = True
        if self.current is not None and self._pending():
            self._summary.skipped += 1
        if status is None:
            all_done = self._index >= len(self.items) or (
                self._index == len(self.items) - 1 and not self._pending())
            status = "timed-out" if self.expired else "finished" if all_done else "stopped"
        self._summary.status = status
        self._summary.seconds = round(self._clock() - self._started, 1)
        if self.mode == "mock":
            per_topic: dict[str, list[int]] = {}
            for it in self.items:  # unanswered questions count against the exam score
                per_topic.setdefault(it.section, [0, 0])[1] += 1
            for r in self._summary.results:
                per_topic[r.section][0] += int(bool(r.correct))
            self._summary.exam_per_topic = per_topic
        if self.mock_id is not None:
            try:
                self.store.finish_mock(self.mock_id, answered=self._summary.answered,
                                       correct=self._summary.correct, per_topic=per_topic,
                                       status=status, at=self._now())
            except StoreError:
                pass
        return self._summary


def _score(verdicts: Sequence[Verdict]) -> float:
    """The share of ``verdicts`` that are right (0 for none)."""
    return sum(1 for v in verdicts if v.correct) / len(verdicts) if verdicts else 0.0
