"""The room: who joined, the current question and its votes, the histogram — no network.

:class:`Room` is the state the class server keeps and the instructor's screen reads. It
changes only on the server's event loop; the instructor's screen registers a listener
(:meth:`Room.listen`) and reads :meth:`Room.snapshot` when told something changed.

Peer instruction, as states of the current question (:data:`tutor.classroom.protocol.STATES`)::

    push → open (vote 1) → close → closed ─ discuss → discuss ─ reopen → open (vote 2)
                                    └──────────────── reveal → revealed ─ next → waiting

Both votes are kept; the snapshot puts their histograms side by side.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from tutor.classroom.marking import BUCKET_TITLES, IMPRECISE, LETTERS, RIGHT, UNKNOWN, Mark
from tutor.classroom.questions import Asked

ANONYMOUS = "anonymous"


@dataclass
class Student:
    token: str
    name: str
    seed: int
    online: bool = False
    last_seq: int = 0


@dataclass(frozen=True)
class Vote:
    """One student's answer in one vote."""

    response: str
    mark: Mark
    seconds: float | None
    seq: int


@dataclass
class Current:
    """The question on the board."""

    number: int
    ref: str
    title: str
    state: str = "open"
    round: int = 1
    opened_at: float = field(default_factory=time.monotonic)
    votes: dict[int, dict[str, Vote]] = field(default_factory=lambda: {1: {}, 2: {}})


@dataclass(frozen=True)
class Bar:
    """One row of the histogram: a bucket, its title, the count in each vote, and (for a
    multiple-choice option) the mistake behind it."""

    bucket: str
    title: str
    counts: tuple[int, int]
    why: str = ""
    right: bool = False


@dataclass(frozen=True)
class Snapshot:
    """What the instructor's screen shows, read in one go."""

    number: int
    ref: str
    title: str
    state: str
    round: int
    online: int
    joined: int
    answered: tuple[int, int]
    seconds: float
    bars: tuple[Bar, ...]
    names: tuple[str, ...]


Listener = Callable[[str, tuple[str, ...]], None]
"""Called with what changed (``joined``, ``left``, ``answer``, ``state``, ``question``) and
the students it concerns."""


def student_seed(session_seed: int, token: str) -> int:
    """A student's own seed for this session: their numbers differ from their neighbour's."""
    return zlib.crc32(f"{session_seed}:{token}".encode())


class Room:
    """Students, the current question and its votes."""

    def __init__(self, session_id: str, seed: int):
        self.session_id = session_id
        self.seed = seed
        self.students: dict[str, Student] = {}
        self.current: Current | None = None
        self.numbers = 0
        self._listeners: list[Listener] = []
        self.options: tuple[str, ...] = ()
        self.why: tuple[str, ...] = ()
        self.right_option: int | None = None

    # ---------------------------------------------------------------- listeners

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def tell(self, what: str, who: tuple[str, ...] = ()) -> None:
        for listener in list(self._listeners):
            listener(what, who)

    # ---------------------------------------------------------------- students

    def add(self, token: str, name: str, seed: int | None = None) -> Student:
        student = self.students.get(token)
        if student is None:
            student = Student(token, name, student_seed(self.seed, token) if seed is None else seed)
            self.students[token] = student
        return student

    def display_name(self, token: str) -> str:
        student = self.students.get(token)
        return (student.name if student and student.name else ANONYMOUS)

    # ---------------------------------------------------------------- the question

    def push(self, ref: str, title: str, asked: Asked | None = None,
             number: int | None = None) -> Current:
        """A new question, open for the first vote."""
        self.numbers = number if number is not None else self.numbers + 1
        self.current = Current(self.numbers, ref, title)
        choice = asked if asked is not None and asked.view["kind"] == "choice" else None
        self.options = tuple(choice.view["options"]) if choice else ()
        self.why = choice.options_why if choice else ()
        self.right_option = choice.right_option if choice else None
        return self.current

    def vote_of(self, token: str) -> tuple[int, Vote] | None:
        """The student's latest vote on the current question (round, vote)."""
        cur = self.current
        if cur is None:
            return None
        for r in (2, 1):
            if token in cur.votes[r]:
                return r, cur.votes[r][token]
        return None

    def record(self, token: str, round_: int, vote: Vote) -> None:
        assert self.current is not None
        self.current.votes[round_][token] = vote

    # ---------------------------------------------------------------- reading

    def snapshot(self) -> Snapshot:
        cur = self.current
        online = sum(1 for s in self.students.values() if s.online)
        names = tuple(self.display_name(t) for t, s in self.students.items() if s.online)
        if cur is None:
            return Snapshot(0, "", "", "waiting", 0, online, len(self.students), (0, 0), 0.0, (),
                            names)
        return Snapshot(cur.number, cur.ref, cur.title, cur.state, cur.round, online,
                        len(self.students), (len(cur.votes[1]), len(cur.votes[2])),
                        time.monotonic() - cur.opened_at, self.bars(), names)

    def bars(self) -> tuple[Bar, ...]:
        """The histogram: right first, then each mistake or option by count, unknown last;
        for multiple choice, every option in order with the mistake behind it."""
        cur = self.current
        if cur is None:
            return ()
        counts: dict[str, list] = {}
        for r in (1, 2):
            for vote in cur.votes[r].values():
                row = counts.setdefault(vote.mark.bucket, [vote.mark.title, [0, 0], vote.mark.correct])
                row[1][r - 1] += 1
        if self.options:  # every option in order, with the mistake behind each distractor
            out = []
            for i, option in enumerate(self.options):
                votes = counts.pop(LETTERS[i], None)
                out.append(Bar(LETTERS[i], option, tuple(votes[1]) if votes else (0, 0),
                               self.why[i] if i < len(self.why) else "", i == self.right_option))
            return tuple(out) + tuple(Bar(k, v[0], tuple(v[1])) for k, v in counts.items())
        order = sorted(counts, key=lambda k: (k != RIGHT, k in (UNKNOWN, IMPRECISE),
                                              -sum(counts[k][1]), k))
        return tuple(Bar(k, counts[k][0] or BUCKET_TITLES.get(k, k), tuple(counts[k][1]),
                         right=bool(counts[k][2])) for k in order)
