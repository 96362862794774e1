"""One sitting of a timed paper, as a plain object both front ends drive.

:class:`PaperRun` walks the parts in order, marks each answer as it comes (numeric parts with
follow-through from the student's own earlier answers to the same question, text parts by
ticks), saves every marked part to the progress store at once, and on :meth:`finish` fills in
the parts never reached as blank so the paper's total is out of all its marks. The clock is
injected, so tests run a 45-minute paper in no time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tutor.exam.marking import PartMark, mark_numeric, mark_text, parse_answer
from tutor.exam.numbers import Value
from tutor.exam.paper import ExamPart, ExamQuestion, Paper
from tutor.store import StoreError
from tutor.store.papers import finish_paper, record_part, start_paper


@dataclass(frozen=True)
class PaperResult:
    status: str
    marks: tuple[tuple[ExamQuestion, tuple[PartMark, ...]], ...]
    paper_id: int | None
    saved: bool

    @property
    def earned(self) -> int:
        return sum(m.earned for _, ms in self.marks for m in ms)

    @property
    def total(self) -> int:
        return sum(m.marks for _, ms in self.marks for m in ms)

    def by_topic(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for q, ms in self.marks:
            row = out.setdefault(q.spec.section, [0, 0])
            row[0] += sum(m.earned for m in ms)
            row[1] += sum(m.marks for m in ms)
        return out


class PaperRun:
    """A paper being sat. Call :meth:`start`, then answer :attr:`current` until it is None
    (or :attr:`expired`), then :meth:`finish`."""

    def __init__(self, paper: Paper, store=None, clock: Callable[[], float] = time.monotonic):
        self.paper = paper
        self.store = store
        self.clock = clock
        self.paper_id: int | None = None
        self.save_errors: list[str] = []
        self._started: float | None = None
        self._order = [(q, p) for q in paper.questions for p in q.parts]
        self._next = 0
        self._marks: dict[tuple[str, str], PartMark] = {}
        self._values: dict[str, dict[str, tuple[Value | None, bool]]] = {}

    # ------------------------------------------------------------------ time

    def start(self) -> None:
        self._started = self.clock()
        if self.store is not None:
            self.paper_id = self._save(lambda: start_paper(self.store, self.paper.time_limit_s,
                                                           self.paper.seed))

    def remaining(self) -> float | None:
        """Seconds left (never below 0), or None for an untimed paper."""
        if self.paper.time_limit_s is None:
            return None
        used = 0.0 if self._started is None else self.clock() - self._started
        return max(0.0, self.paper.time_limit_s - used)

    @property
    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0

    # ------------------------------------------------------------------ parts

    @property
    def current(self) -> tuple[ExamQuestion, ExamPart] | None:
        return self._order[self._next] if self._next < len(self._order) else None

    @property
    def position(self) -> tuple[int, int]:
        """(parts done, parts in the paper)."""
        return self._next, len(self._order)

    def answer(self, response: str | Iterable[int]) -> PartMark:
        """Mark the current part and move on.

        ``response`` is the typed text for a numeric part (blank = skipped) or the ticked
        0-based point indices for a text part.

        Raises:
            AnswerError: the text is not a number, or a tick is outside the scheme; nothing is
                marked, ask again.
        """
        q, part = self._need_current()
        if part.kind == "numeric":
            text = "" if response is None else str(response)
            value = parse_answer(part, text)
            mark = mark_numeric(part, value, self._values.setdefault(q.id, {}), text)
            self._values[q.id][part.letter] = (value, mark.status == "right")
            saved = text
        else:
            mark = mark_text(part, response or ())  # type: ignore[arg-type]
            saved = " ".join(str(i + 1) for i in mark.ticked)
        self._record(q, part, mark, saved)
        return mark

    def _need_current(self) -> tuple[ExamQuestion, ExamPart]:
        cur = self.current
        if cur is None:
            raise RuntimeError("the paper has no parts left")
        return cur

    def _record(self, q: ExamQuestion, part: ExamPart, mark: PartMark, response: str) -> None:
        self._marks[(q.id, part.letter)] = mark
        self._next += 1
        store, paper_id = self.store, self.paper_id
        if store is not None and paper_id is not None:
            self._save(lambda: record_part(
                store, paper_id, q.id, part.letter, q.spec.section, variant=q.seed,
                status=mark.status, earned=mark.earned, marks=mark.marks, response=response[:500],
                diagnoses=[n.id for n in mark.diagnoses]))

    def _save(self, write: Callable[[], object]):
        try:
            return write()
        except StoreError as exc:
            self.save_errors.append(str(exc))
            return None

    # ------------------------------------------------------------------ end

    def finish(self, status: str | None = None) -> PaperResult:
        """Close the paper: unreached parts count as blank. ``status`` defaults to
        ``timed-out`` when time ran out, else ``finished`` (pass ``stopped`` for a quit)."""
        status = status or ("timed-out" if self.expired else "finished")
        while self.current is not None:
            q, part = self.current
            mark = PartMark(part.letter, 0, part.marks, "blank", "Not reached.")
            self._record(q, part, mark, "")
        store, paper_id = self.store, self.paper_id
        if store is not None and paper_id is not None:
            self._save(lambda: finish_paper(store, paper_id, status))
        marks = tuple((q, tuple(self._marks[(q.id, p.letter)] for p in q.parts))
                      for q in self.paper.questions)
        return PaperResult(status, marks, self.paper_id, self.paper_id is not None and not self.save_errors)
