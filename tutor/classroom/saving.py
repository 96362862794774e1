"""Behind the class server's acknowledgements: answers saved in batches, wrong numbers
diagnosed one at a time.

:class:`AnswerSaver` commits the answers that arrived together in one transaction and
releases each waiting handler only after the commit, so an acknowledged answer is on disk.
:class:`Diagnoser` takes the wrong numbers counted as
:data:`~tutor.classroom.marking.DIAGNOSING`, runs the mistake catalogue on each in a thread
(tens of milliseconds: every catalogued mistake and pair is re-run), and moves the answer to
its mistake's bar and stored row. It lets the answers in flight go first: a diagnosis holds
the GIL while it runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tutor.classroom.marking import BUCKET_TITLES, DIAGNOSING, UNKNOWN, Mark
from tutor.classroom.questions import ask
from tutor.classroom.room import Room, Vote
from tutor.store import Store, StoreError
from tutor.store import classes as saved

DIAGNOSIS_YIELD = 1.0
"""Longest a diagnosis waits for the answers in flight to be acknowledged first."""


def _mark(ref: str, seed: int, response: str) -> Mark:
    """Mark one answer to the question ``ref`` drawn with ``seed`` (diagnosis runs the engine)."""
    return ask(ref, seed).mark(response)


@dataclass
class _Pending:
    answer: saved.ClassAnswer
    done: asyncio.Future


class AnswerSaver:
    """Batches of answers, one transaction each; :meth:`save` returns after the commit."""

    def __init__(self, store: Store):
        self.store = store
        self.busy = 0
        """Answers being marked and saved now (the server counts them; diagnoses wait)."""
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def save(self, row: saved.ClassAnswer) -> None:
        """Save ``row`` with whatever else is waiting.

        Raises:
            StoreError: the batch could not be committed (nothing of it was saved).
        """
        done = asyncio.get_running_loop().create_future()
        await self._queue.put(_Pending(row, done))
        await done

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                await asyncio.to_thread(saved.save_answers, self.store, [p.answer for p in batch])
            except StoreError as exc:
                for p in batch:
                    if not p.done.done():
                        p.done.set_exception(exc)
                continue
            for p in batch:
                if not p.done.done():
                    p.done.set_result(None)


class Diagnoser:
    """Diagnoses wrong numbers behind the acknowledgements; see the module docstring."""

    def __init__(self, store: Store, room: Room, saver: AnswerSaver):
        self.store, self.room, self.saver = store, room, saver
        self._queue: asyncio.Queue[tuple[saved.ClassAnswer, str, int]] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def put(self, row: saved.ClassAnswer, ref: str, seed: int) -> None:
        """Diagnose ``row`` (an answer to question ``ref`` on the student's ``seed``)."""
        self._queue.put_nowait((row, ref, seed))

    async def _run(self) -> None:
        while True:
            row, ref, seed = await self._queue.get()
            waited = 0.0
            while self.saver.busy and waited < DIAGNOSIS_YIELD:  # answers waiting for acks
                await asyncio.sleep(0.01)
                waited += 0.01
            try:
                mark = await asyncio.to_thread(_mark, ref, seed, row.response)
            except Exception:  # noqa: BLE001 - a failed diagnosis leaves the answer counted wrong
                mark = Mark(True, False, UNKNOWN, BUCKET_TITLES[UNKNOWN])
            done = saved.ClassAnswer(row.session_id, row.number, row.round, row.student,
                                     row.response, mark.correct, mark.bucket, mark.title,
                                     row.seconds, row.answered_at)
            try:
                await asyncio.to_thread(saved.update_mark, self.store, done)
            except StoreError:
                pass  # the row keeps "diagnosing"; a restart diagnoses it again
            cur = self.room.current
            vote = cur.votes[row.round].get(row.student) if cur and cur.number == row.number else None
            if vote is not None and vote.response == row.response and vote.mark.bucket == DIAGNOSING:
                self.room.record(row.student, row.round,
                                 Vote(vote.response, mark, vote.seconds, vote.seq))
                self.room.tell("diagnosed", (row.student,))
