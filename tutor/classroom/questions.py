"""What the instructor can push to the room, and one question as one student sees it.

A *source* is named by a reference string, which is also what the store keeps:

* ``bank:<id>`` — a hand-written quiz item (multiple choice, true/false or a fill-in);
* ``gen:<family>`` — a generated problem (its first numeric part; ``gen:<family>:<n>`` for
  part n): **numbers per student**, from the student's own seed;
* ``paper:<xq-id>:<letter>`` — a numeric part of a structured exam question, numbers per
  student as well;
* ``trace:<name>:<value>`` — a step of a practice trace: the student computes ``value`` of
  the worked example ``name`` on inputs drawn for them (``engine.traces.draw_inputs``).

:func:`ask` ``(ref, seed)`` gives an :class:`Asked`: the JSON view the student's client
shows, the right answer and the explanation shown at reveal, and :meth:`Asked.mark`. All
marking goes through :mod:`tutor.classroom.marking`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine import traces
from tutor.classroom import marking
from tutor.classroom.marking import LETTERS, Mark
from tutor.classroom.marking import show_matrix as mat
from tutor.classroom.marking import show_number as num
from tutor.classroom.marking import show_vector as vec
from tutor.content import LESSON_IDS, get_lesson
from tutor.exam.marking import how_to_answer
from tutor.exam.model import by_id as exam_by_id
from tutor.exam.model import load_questions
from tutor.exam.paper import instantiate
from tutor.inputs import TraceLink, format_value
from tutor.quiz.bank import by_id as bank_by_id
from tutor.quiz.bank import load_bank
from tutor.quiz.generators import FAMILIES, generate

KINDS = ("bank", "gen", "paper", "trace")
PER_STUDENT = ("gen", "paper", "trace")


@dataclass(frozen=True)
class Source:
    """One entry of the instructor's picker."""

    ref: str
    title: str
    topic: str
    words: str = field(default="", compare=False)
    """Everything the picker's filter searches (the whole prompt of a bank item)."""

    @property
    def kind(self) -> str:
        return self.ref.split(":", 1)[0]

    @property
    def per_student(self) -> bool:
        """Each student gets their own numbers (a seed per student)."""
        return self.kind in PER_STUDENT


@dataclass
class Asked:
    """One question as one student (one seed) sees it.

    ``view`` is JSON-ready: ``title``, ``prompt``, ``kind`` (``choice`` or ``text``),
    ``options`` (for ``choice``) and ``instructions``. ``options_why`` is what the instructor
    sees beside each option: the mistake behind a distractor ("" for the right one).
    """

    ref: str
    seed: int
    question_id: str
    topic: str
    view: dict[str, Any]
    answer_text: str
    explanation: tuple[str, ...]
    marker: Callable[[str, bool], Mark] = field(repr=False)
    options_why: tuple[str, ...] = ()
    right_option: int | None = None
    """For a choice: the index of the right option."""

    def mark(self, text: str) -> Mark:
        """Mark and diagnose ``text`` (already cleaned of control characters)."""
        return self.marker(text, True)

    def quick(self, text: str) -> Mark:
        """Mark ``text`` without the diagnosis of a wrong number (its bucket is
        :data:`~tutor.classroom.marking.DIAGNOSING` until :meth:`mark` runs); a practice-trace
        step is marked by the diagnosis itself, so it is marked in full here too."""
        return self.marker(text, False)


# --------------------------------------------------------------------------- the picker

def quick_sources() -> list[Source]:
    """Bank items, generated families and exam parts (no engine work to list them)."""
    out = [Source(f"bank:{q.id}", _one_line(q.prompt), q.section, q.prompt)
           for q in load_bank() if q.kind != "free"]
    out += [Source(f"gen:{f.id}", f.title, f.section) for f in FAMILIES.values()]
    for spec in load_questions():
        for p in spec.parts:
            if p.kind == "numeric":
                out.append(Source(f"paper:{spec.id}:{p.letter}", f"{spec.title} ({p.letter})",
                                  spec.section))
    return out


def trace_sources() -> list[Source]:
    """Every checkable value of every trace (builds each trace once: run it in a worker)."""
    out = []
    for info in traces.list_traces():
        try:
            names = marking.checkable(info.name)
        except Exception:  # noqa: BLE001 - a trace the catalogue cannot check is not offered
            continue
        for name in names:
            out.append(Source(f"trace:{info.name}:{name}", f"{name} in {info.title}",
                              LESSON_IDS[info.section - 1], info.name))
    return out


def source(ref: str) -> Source:
    """The source behind ``ref``.

    Raises:
        ValueError: for a reference that names nothing the tutor has.
    """
    kind, _, rest = ref.partition(":")
    if kind == "bank":
        q = bank_by_id(load_bank()).get(rest)
        if q is None or q.kind == "free":
            raise ValueError(f"no bank question {rest!r} that class mode can mark")
        return Source(ref, _one_line(q.prompt), q.section)
    if kind == "gen":
        fam = FAMILIES.get(rest.split(":")[0])
        if fam is None:
            raise ValueError(f"no generated family {rest!r}; expected one of: " + ", ".join(FAMILIES))
        return Source(ref, fam.title, fam.section)
    if kind == "paper":
        xq, _, letter = rest.partition(":")
        spec = exam_by_id().get(xq)
        part = next((p for p in spec.parts if p.letter == letter), None) if spec else None
        if spec is None or part is None or part.kind != "numeric":
            raise ValueError(f"no numeric exam part {rest!r}")
        return Source(ref, f"{spec.title} ({letter})", spec.section)
    if kind == "trace":
        name, _, value = rest.partition(":")
        info = traces.get_info(name)
        return Source(ref, f"{info.title}: {value}", LESSON_IDS[info.section - 1])
    raise ValueError(f"{ref[:40]!r}: expected bank:, gen:, paper: or trace:")


# --------------------------------------------------------------------------- asking

@functools.lru_cache(maxsize=4096)
def ask(ref: str, seed: int) -> Asked:
    """The question ``ref`` for one student's ``seed`` (the same for everyone on a bank item).

    Raises:
        ValueError: for an unknown reference.
    """
    kind = source(ref).kind
    if kind == "bank":
        return _ask_bank(ref)
    return {"gen": _ask_gen, "paper": _ask_paper, "trace": _ask_trace}[kind](ref, int(seed))


def _ask_bank(ref: str) -> Asked:
    q = bank_by_id(load_bank())[ref.split(":", 1)[1]]
    view: dict[str, Any] = {"title": _lesson_title(q.section), "prompt": q.prompt, "kind": "text",
                            "options": [], "instructions": q.instructions}
    why: tuple[str, ...] = ()
    right = None
    if q.kind == "mcq":
        view.update(kind="choice", options=list(q.choices))
        why = tuple(marking.choice_why(q, i) for i in range(len(q.choices)))
        right = int(q.answer)
    elif q.kind == "true_false":
        view.update(kind="choice", options=["true", "false"])
        right = 0 if q.answer else 1
    return Asked(ref, 0, q.id, q.section, view, q.answer_text, (q.explanation,),
                 lambda text, now: marking.mark_bank(q, text, now), why, right)


def _ask_gen(ref: str, seed: int) -> Asked:
    _, family, *index = ref.split(":")
    problem = generate(family, seed)
    numeric = [i for i, p in enumerate(problem.parts) if p.kind in ("number", "vector")]
    i = int(index[0]) - 1 if index else (numeric[0] if numeric else 0)
    if not 0 <= i < len(problem.parts):
        raise ValueError(f"{family} has {len(problem.parts)} parts")
    part = problem.parts[i]
    view = {"title": problem.title, "prompt": f"{problem.prompt}\n{part.prompt}",
            "kind": "choice" if part.kind == "choice" else "text",
            "options": list(part.options) if part.kind == "choice" else [],
            "instructions": part.instructions}
    lines = (*problem.solution, "Replay it: " + problem.trace_command)
    right = part.options.index(part.answer) if part.kind == "choice" else None
    return Asked(ref, seed, problem.question_id, problem.section, view, part.answer_text,
                 lines, lambda text, now: marking.mark_part(part, text, now), right_option=right)


def _ask_paper(ref: str, seed: int) -> Asked:
    _, xq, letter = ref.split(":")
    question = instantiate(exam_by_id()[xq], seed)
    part = question.part(letter)
    view = {"title": question.spec.title, "prompt": f"{question.stem}\n({letter}) {part.prompt}",
            "kind": "text", "options": [], "instructions": how_to_answer(part)}
    answer = part.step.answer if part.step else 0.0
    shown = vec(answer) if isinstance(answer, tuple) else num(answer)
    return Asked(ref, seed, f"{xq}({letter})", question.spec.section, view, shown,
                 part.model_answer, lambda text, now: marking.mark_exam_part(part, text, now))


def _ask_trace(ref: str, seed: int) -> Asked:
    _, name, value = ref.split(":")
    info = traces.get_info(name)
    inputs = traces.draw_inputs(name, np.random.default_rng(seed))
    shape = tuple(marking.checkable(name, inputs)[value])
    right = marking.expected(name, inputs, value)
    lines = "\n".join(f"  {k} = {_shown(v)}" for k, v in inputs.items())
    size = int(np.prod(shape)) if shape else 1
    how = ("Type one number." if not shape else
           f"Type {size} numbers separated by commas, row by row.")
    view = {"title": info.title, "prompt": f"{info.title}, on these inputs:\n{lines}\n"
            f"Compute {value}" + _shape_words(shape) + ".",
            "kind": "text", "options": [], "instructions": how}
    shown = num(float(right)) if not shape else vec(right.ravel().tolist())
    command = TraceLink(name, inputs).command
    return Asked(ref, seed, f"trace:{name}:{value}", LESSON_IDS[info.section - 1], view, shown,
                 ("Replay it step by step: " + command,),
                 lambda text, now: marking.mark_trace(name, inputs, value, shape, text, now))


def _shown(value: Any) -> str:
    """An input as the worked examples print it: ``[1, 0; 0, 1]`` for a matrix."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf" and 1 <= value.ndim <= 2:
        return mat(value.tolist()) if value.ndim == 2 else vec(value.tolist())
    return format_value(value)


def _shape_words(shape: tuple[int, ...]) -> str:
    if not shape:
        return ""
    if len(shape) == 1:
        return f" ({shape[0]} numbers)"
    return f" (a {' × '.join(map(str, shape))} matrix)"


@functools.cache
def _lesson_title(lesson_id: str) -> str:
    try:
        return get_lesson(lesson_id).title
    except LookupError:
        return lesson_id


def _one_line(text: str, limit: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def letter(i: int) -> str:
    """The label of option ``i`` (``a`` …)."""
    return LETTERS[i]
