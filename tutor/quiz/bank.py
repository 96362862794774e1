"""The hand-written quiz bank: load ``lessons/quiz/*.toml`` and check it.

Pure Python (standard library only), so the CLI can load it without numba or textual.

File format
===========

Every ``*.toml`` file under the quiz folder (``lessons.ROOT / "quiz"`` unless a ``root`` is
passed) holds an array of tables named ``question`` and nothing else::

    [[question]]
    id = "scoring-sqrt-dk-value"        # required; kebab-case, unique across all files
    kind = "fill"                       # required; "mcq" | "true_false" | "fill" | "free"
    section = "scoring"                 # required; one of SECTIONS (the 12 lesson ids)
    exam_topics = ["exam-scaled-dot"]   # optional list of EXAM_TOPICS ids; default []
    difficulty = 1                      # required; 1 (recall), 2 (apply) or 3 (analyse)
    prompt = "d_k = 64. What is √d_k?"  # required, non-empty
    answer = 8                          # required; type depends on kind (below)
    tolerance = 0                       # numeric fill only (required there)
    explanation = "..."                 # required, non-empty: why the answer is right
    trace = "scaling"                   # optional: a trace name (engine.traces.REGISTRY)
    hint = "..."                        # optional nudge shown on request or after a miss
    erratum = "qkv-weights"             # optional: id of the notes' erratum in lessons/errata.toml
    value = "scores[1]"                 # optional (numeric fill, mcq): the value the answer is
    inputs = { Q = [0.5, -0.2] }        #   of trace's computation on these inputs (default: the
    computation = "sequence-loss"       #   notes'); computation overrides trace (an extra one)

Per kind:

* ``mcq``: ``choices`` = 3–5 distinct non-empty strings; ``answer`` = 0-based index of the
  right choice. The student sees the choices labelled a, b, c… (and may answer 1, 2, 3…).
  ``why_wrong`` is a table, written last in the item as ``[question.why_wrong]``, with one
  line per wrong choice keyed by its letter (``a = "..."``): why that choice is wrong, shown
  when a student picks it. Every wrong choice needs one; the right one has none — except a
  choice that *is* a catalogued mistake: ``[question.choice_mistakes]`` maps its letter to
  the mistake's id (``a = "scale-by-dk"``), and its why-wrong line comes from the catalogue,
  filled with the numbers of the item's ``value`` (so the item needs one).
* ``true_false``: ``answer`` = ``true`` or ``false`` (a TOML boolean). The prompt is a
  statement, usually a pitfall; the explanation says why it is true or false.
* ``fill``: ``answer`` is a string (text answer) or a number (numeric answer).
  ``accept`` (optional) lists further strings that also count. A numeric answer needs
  ``tolerance`` (absolute, ≥ 0; shown to the student by :attr:`Question.instructions`).
  With ``value`` (and ``trace`` or ``computation``, optionally ``inputs``) the answer is that
  value of the mistake catalogue's computation, and a wrong number is diagnosed there
  (``tests/test_diagnosis_quiz.py`` holds each answer to its computation).
* ``free``: ``answer`` = the model answer the student compares with and grades themselves;
  ``key_points`` (optional) lists what a full answer mentions, for that self-grading.

Fields a kind does not use (``choices`` on a fill item, ``tolerance`` on a text answer…) and
unknown fields are errors, so typos such as ``explaination`` are caught.

Ids are stable: progress is stored against them, so edit a question in place and keep its id.
Choice order is hand-placed (right answers are spread over the positions, and the right answer
is no more often the longest choice than chance); show the choices in file order, or keep the
mapping if you shuffle. ``erratum`` marks items where the lecture notes go wrong: it names an
entry of the errata catalogue (``tutor.errata``), whose one-line summary is shown after the
answer, and the explanation says what the notes got wrong and why.

Python API
==========

* :func:`load_bank` ``(root=None) -> list[Question]`` in file-name order, then file order;
  cached per folder (:func:`clear_cache` empties the cache). Raises
  :class:`~tutor.content_schema.ContentError`
  (a ``ValueError``) listing every problem found as ``file: question #n (id 'x'): field 'f':
  expected ..., got ...``.
* Marking (:func:`~tutor.quiz.marking.check_answer`, numbers, tolerance, hints) lives in
  :mod:`tutor.quiz.marking`, shared with the generated problems.
* :class:`Question` helpers: ``instructions`` (how to answer, stating the tolerance),
  ``answer_text`` (the right answer for display), ``is_numeric``, ``source`` (file name).
* :data:`SECTIONS`, :data:`EXAM_TOPICS`: the ids from docs/DEVELOPING.md.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import lessons
from engine.mistakes.catalogue import MISTAKES  # the records only: no NumPy, no traces
from tutor.content import EXAM_TOPICS, LESSON_IDS
from tutor.content_schema import ContentError
from tutor.errata import load_errata
from tutor.marking import LETTERS, NUMBER_INSTRUCTIONS, Link, squash, tolerance_text
from tutor.render.numbers import exact

WHAT = "quiz bank"
"""How a :class:`~tutor.content_schema.ContentError` from this loader names what it read."""

SECTIONS: tuple[str, ...] = LESSON_IDS
"""Lesson ids in lecture order; every question links to one of them."""

KINDS: tuple[str, ...] = ("mcq", "true_false", "fill", "free")

Kind = Literal["mcq", "true_false", "fill", "free"]

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_COMMON = {"id", "kind", "section", "exam_topics", "difficulty", "prompt", "answer",
           "explanation", "trace", "hint", "erratum"}
_LINK = {"value", "inputs", "computation"}
_ALLOWED: dict[str, set[str]] = {
    "mcq": _COMMON | _LINK | {"choices", "why_wrong", "choice_mistakes"},
    "true_false": set(_COMMON),
    "fill": _COMMON | _LINK | {"accept", "tolerance"},
    "free": _COMMON | {"key_points"},
}


@dataclass(frozen=True)
class Question:
    """One checked quiz item. ``answer`` is an int (mcq index), bool, str or float."""

    id: str
    kind: Kind
    section: str
    prompt: str
    answer: int | bool | str | float
    explanation: str
    difficulty: int
    exam_topics: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    accept: tuple[str, ...] = ()
    tolerance: float | None = None
    trace: str | None = None
    hint: str | None = None
    erratum: str | None = None
    """The catalogue's one-line summary of the notes' erratum (shown after answering)."""
    erratum_id: str | None = None
    key_points: tuple[str, ...] = ()
    why_wrong: tuple[str, ...] = ()
    """mcq only: one line per choice saying why it is wrong ("" for the right choice and for
    a choice whose line comes from the catalogue, :attr:`choice_mistakes`)."""
    source: str = field(default="", compare=False)
    """File name the item came from (for messages)."""
    value: str | None = None
    """The value of the item's computation the answer is (numeric fill, mcq), if any."""
    inputs: dict[str, Any] | None = field(default=None, compare=False)
    """The computation's inputs (None: the notes' defaults)."""
    computation: str | None = None
    """The mistake catalogue's computation, when it is not :attr:`trace`."""
    choice_mistakes: tuple[str, ...] = ()
    """mcq only: per choice, the catalogued mistake it is ("" for none)."""

    @property
    def link(self) -> Link | None:
        """Where the answer is computed (and a wrong number diagnosed), or None."""
        where = self.computation or self.trace
        if self.value is None or where is None:
            return None
        return Link(where, self.value, self.inputs)

    @property
    def is_numeric(self) -> bool:
        """A fill-in whose answer is a number (checked with ``tolerance``)."""
        return self.kind == "fill" and isinstance(self.answer, float)

    @property
    def answer_text(self) -> str:
        """The correct answer as the student should see it after answering."""
        if self.kind == "mcq":
            i = int(self.answer)
            return f"{LETTERS[i]}) {self.choices[i]}"
        if self.kind == "true_false":
            return "true" if self.answer else "false"
        if self.is_numeric:
            text = exact(float(self.answer))
            return f"{text} (±{exact(self.tolerance or 0.0)})" if self.tolerance else text
        return str(self.answer)

    @property
    def instructions(self) -> str:
        """How to type an answer to this question (states the numeric tolerance)."""
        if self.kind == "mcq":
            n = len(self.choices)
            return f"Answer with a letter a–{LETTERS[n - 1]} or a number 1–{n}."
        if self.kind == "true_false":
            return "Answer true or false (t/f, yes/no also work)."
        if self.is_numeric:
            return f"{NUMBER_INSTRUCTIONS}{tolerance_text(self.tolerance or 0.0)}."
        if self.kind == "fill":
            return "Type a short answer; case, spaces and √ vs sqrt do not matter."
        return "Write your answer, then compare it with the model answer and grade yourself."


# --------------------------------------------------------------------------- loading

_CACHE: dict[Path, list[Question]] = {}


def default_root() -> Path:
    """``lessons/quiz`` inside the installed package."""
    return Path(lessons.ROOT) / "quiz"


def clear_cache() -> None:
    """Forget loaded banks (tests that edit files call this)."""
    _CACHE.clear()


def load_bank(root: str | Path | None = None) -> list[Question]:
    """All questions under ``root`` (default ``lessons/quiz``), checked; cached per folder.

    Raises:
        ContentError: listing every problem (file, item index and id, field, what was expected).
    """
    folder = Path(root) if root is not None else default_root()
    key = folder.resolve()
    if key not in _CACHE:
        _CACHE[key] = _load(folder)
    return list(_CACHE[key])


def by_id(questions: Iterable[Question]) -> dict[str, Question]:
    """``{id: question}``."""
    return {q.id: q for q in questions}


def _load(folder: Path) -> list[Question]:
    if not folder.is_dir():
        raise ContentError([f"{folder}: no such folder; expected the quiz folder with *.toml files"], WHAT)
    files = sorted(folder.glob("*.toml"))
    if not files:
        raise ContentError([f"{folder}: no *.toml files; expected files of [[question]] tables"], WHAT)
    errors: list[str] = []
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for path in files:
        for q in _load_file(path, errors):
            if q.id in seen:
                errors.append(f"{path.name}: id {q.id!r} is also used in {seen[q.id]}; "
                              "expected ids unique across all quiz files")
            else:
                seen[q.id] = path.name
                questions.append(q)
    if errors:
        raise ContentError(errors, WHAT)
    return questions


def _load_file(path: Path, errors: list[str]) -> list[Question]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        errors.append(f"{path.name}: not UTF-8 text")
        return []
    except tomllib.TOMLDecodeError as exc:
        errors.append(f"{path.name}: not valid TOML ({exc})")
        return []
    extra = sorted(set(data) - {"question"})
    if extra:
        errors.append(f"{path.name}: unexpected top-level key(s) {', '.join(extra)}; "
                      "expected only [[question]] tables")
    items = data.get("question")
    if items is None:
        errors.append(f"{path.name}: no [[question]] tables; expected at least one")
        return []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        errors.append(f"{path.name}: 'question' must be an array of tables ([[question]])")
        return []
    out = []
    for index, item in enumerate(items, start=1):
        q = _parse_item(path.name, index, item, errors)
        if q is not None:
            out.append(q)
    return out


class _Item:
    """Collects errors for one [[question]] table."""

    def __init__(self, file: str, index: int, raw: dict[str, Any], errors: list[str]):
        self.raw = raw
        self.errors = errors
        self.start = len(errors)
        ident = raw.get("id")
        label = f"question #{index}" + (f" (id {ident!r})" if isinstance(ident, str) else "")
        self.where = f"{file}: {label}"

    @property
    def ok(self) -> bool:
        return len(self.errors) == self.start

    def error(self, name: str, expected: str, got: Any = ...) -> None:
        tail = "" if got is ... else f", got {_show(got)}"
        self.errors.append(f"{self.where}: field {name!r}: expected {expected}{tail}")

    def text(self, name: str, required: bool = True) -> str | None:
        if name not in self.raw:
            if required:
                self.error(name, "a non-empty string (missing)")
            return None
        value = self.raw[name]
        if not isinstance(value, str) or not value.strip():
            self.error(name, "a non-empty string", value)
            return None
        return value.strip()

    def texts(self, name: str) -> tuple[str, ...]:
        value = self.raw.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.error(name, "a list of non-empty strings", value)
            return ()
        return tuple(v.strip() for v in value)


def _parse_item(file: str, index: int, raw: dict[str, Any], errors: list[str]) -> Question | None:
    it = _Item(file, index, raw, errors)
    ident = it.text("id")
    if ident is not None and not _ID.match(ident):
        it.error("id", "kebab-case like 'scoring-sqrt-dk-why' (a-z, 0-9, single hyphens)", ident)
    kind = raw.get("kind")
    if kind not in KINDS:
        it.error("kind", "one of " + ", ".join(repr(k) for k in KINDS),
                 kind if "kind" in raw else "nothing (missing)")
        return None
    unknown = sorted(set(raw) - _ALLOWED[kind])
    for name in unknown:
        it.errors.append(f"{it.where}: field {name!r}: unknown on a {kind!r} question; expected "
                         "only these fields: " + ", ".join(sorted(_ALLOWED[kind])))
    section = raw.get("section")
    if section not in SECTIONS:
        it.error("section", "a lesson id (" + ", ".join(SECTIONS) + ")",
                 section if "section" in raw else "nothing (missing)")
    topics = raw.get("exam_topics", [])
    if not isinstance(topics, list) or any(t not in EXAM_TOPICS for t in topics):
        it.error("exam_topics", "a list of exam-topic ids (" + ", ".join(EXAM_TOPICS) + ")", topics)
        topics = []
    elif len(set(topics)) != len(topics):
        it.error("exam_topics", "each exam topic at most once", topics)
    difficulty = raw.get("difficulty")
    if isinstance(difficulty, bool) or difficulty not in (1, 2, 3):
        it.error("difficulty", "1, 2 or 3", difficulty if "difficulty" in raw else "nothing (missing)")
    prompt = it.text("prompt")
    explanation = it.text("explanation")
    hint = it.text("hint", required=False)
    erratum_id = it.text("erratum", required=False)
    erratum = None
    if erratum_id is not None:
        known = {e.id: e for e in load_errata()}
        if erratum_id in known:
            erratum = known[erratum_id].summary
        else:
            it.error("erratum", "the id of an entry in lessons/errata.toml", erratum_id)
    trace = it.text("trace", required=False)
    if trace is not None and not _ID.match(trace):
        it.error("trace", "a trace name like 'scaling' (kebab-case)", trace)
    value, inputs, computation = _link(it, kind, trace)

    choices: tuple[str, ...] = ()
    why_wrong: tuple[str, ...] = ()
    choice_mistakes: tuple[str, ...] = ()
    accept: tuple[str, ...] = ()
    key_points: tuple[str, ...] = ()
    tolerance: float | None = None
    answer: Any = raw.get("answer")
    if "answer" not in raw:
        it.error("answer", _ANSWER_EXPECTED[kind] + " (missing)")
    elif kind == "mcq":
        raw_choices = raw.get("choices")
        if (not isinstance(raw_choices, list) or not 3 <= len(raw_choices) <= 5
                or not all(isinstance(c, str) and c.strip() for c in raw_choices)):
            it.error("choices", "a list of 3–5 non-empty strings",
                     raw_choices if "choices" in raw else "nothing (missing)")
        else:
            choices = tuple(c.strip() for c in raw_choices)
            if len({squash(c) for c in choices}) != len(choices):
                it.error("choices", "distinct choices", list(choices))
        if isinstance(answer, bool) or not isinstance(answer, int):
            it.error("answer", _ANSWER_EXPECTED[kind], answer)
        elif choices and not 0 <= answer < len(choices):
            it.error("answer", f"a 0-based index 0–{len(choices) - 1} into choices", answer)
        elif choices:
            choice_mistakes = _choice_mistakes(it, choices, answer, value)
            why_wrong = _why_wrong(it, choices, answer, choice_mistakes)
    elif kind == "true_false":
        if not isinstance(answer, bool):
            it.error("answer", _ANSWER_EXPECTED[kind], answer)
    elif kind == "fill":
        accept = it.texts("accept")
        if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
            it.error("answer", _ANSWER_EXPECTED[kind], answer)
        elif isinstance(answer, str):
            if not answer.strip():
                it.error("answer", "a non-empty string or a number", answer)
            answer = answer.strip()
            if "tolerance" in raw:
                it.error("tolerance", "no tolerance on a text answer (only numeric answers have one)")
        else:
            answer = float(answer)
            if not math.isfinite(answer):
                it.error("answer", "a finite number", answer)
            tol = raw.get("tolerance")
            if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0:
                it.error("tolerance", "a number ≥ 0 (absolute tolerance for a numeric answer)",
                         tol if "tolerance" in raw else "nothing (missing)")
            else:
                tolerance = float(tol)
        if value is not None and not isinstance(answer, float):
            it.error("value", "a numeric answer (a computation's value is a number)", value)
    else:  # free
        if not isinstance(answer, str) or not answer.strip():
            it.error("answer", _ANSWER_EXPECTED[kind], answer)
        else:
            answer = answer.strip()
        key_points = it.texts("key_points")

    if not it.ok:
        return None
    return Question(
        id=ident, kind=kind, section=section, prompt=prompt, answer=answer,  # type: ignore[arg-type]
        explanation=explanation, difficulty=difficulty,  # type: ignore[arg-type]
        exam_topics=tuple(topics), choices=choices, accept=accept, tolerance=tolerance,
        trace=trace, hint=hint, erratum=erratum, erratum_id=erratum_id, key_points=key_points,
        why_wrong=why_wrong, source=file, value=value, inputs=inputs, computation=computation,
        choice_mistakes=choice_mistakes,
    )


def _link(it: _Item, kind: str, trace: str | None) -> tuple[str | None, dict | None, str | None]:
    """``value``, ``inputs`` and ``computation``: where a numeric answer is computed."""
    value = it.text("value", required=False)
    computation = it.text("computation", required=False)
    inputs = it.raw.get("inputs")
    if computation is not None and not _ID.match(computation):
        it.error("computation", "a computation name like 'sequence-loss' (kebab-case)", computation)
    if inputs is not None and not isinstance(inputs, dict):
        it.error("inputs", "a table of the computation's inputs", inputs)
        inputs = None
    if value is None and (inputs is not None or computation is not None):
        it.error("value", "the value the answer is, with inputs or computation (missing)")
    if value is not None and trace is None and computation is None:
        it.error("value", "a trace (or computation) to take the value from")
    return value, inputs, computation


def _choice_mistakes(it: _Item, choices: tuple[str, ...], answer: int,
                     value: str | None) -> tuple[str, ...]:
    """The ``[question.choice_mistakes]`` table as one mistake id per choice ("" for none)."""
    raw = it.raw.get("choice_mistakes")
    if raw is None:
        return ()
    wrong = [LETTERS[i] for i in range(len(choices)) if i != answer]
    if not isinstance(raw, dict) or not raw:
        it.error("choice_mistakes", "a table of wrong choices' letters and mistake ids", raw)
        return ()
    if value is None:
        it.error("choice_mistakes", "an item with a value (its numbers fill the catalogue's lines)")
    for letter, mistake in raw.items():
        if letter not in wrong:
            it.error("choice_mistakes", "letters of wrong choices (" + ", ".join(wrong) + ")", letter)
        if mistake not in MISTAKES:
            it.error("choice_mistakes", "ids of the mistake catalogue", mistake)
    return tuple(str(raw.get(LETTERS[i], "")) for i in range(len(choices)))


def _why_wrong(it: _Item, choices: tuple[str, ...], answer: int,
               catalogued: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The ``[question.why_wrong]`` table as one line per choice ("" for the right one and for
    a choice the catalogue explains)."""
    raw = it.raw.get("why_wrong")
    own = {LETTERS[i] for i, m in enumerate(catalogued) if m}
    wrong = [LETTERS[i] for i in range(len(choices)) if i != answer and LETTERS[i] not in own]
    expected = "a table with one line for each wrong choice (" + ", ".join(wrong) + ")"
    if raw is None and not wrong:  # the catalogue explains every wrong choice
        return ("",) * len(choices)
    if not isinstance(raw, dict):
        it.error("why_wrong", expected, raw if "why_wrong" in it.raw else "nothing (missing)")
        return ()
    for letter in sorted(set(raw) - set(wrong)):
        right = letter == LETTERS[answer]
        it.error("why_wrong", expected + (f"; {letter} is the right answer" if right else
                                          f"; {letter}'s line comes from the mistake catalogue"
                                          if letter in own else f"; there is no choice {letter}"),
                 letter)
    out = []
    for i in range(len(choices)):
        line = raw.get(LETTERS[i], "") if i != answer and LETTERS[i] not in own else ""
        if LETTERS[i] in wrong and (not isinstance(line, str) or not line.strip()):
            it.error("why_wrong", f"a non-empty line for choice {LETTERS[i]}", line or "nothing (missing)")
        out.append(line.strip() if isinstance(line, str) else "")
    return tuple(out)


_ANSWER_EXPECTED = {
    "mcq": "the 0-based index of the right choice (an integer)",
    "true_false": "true or false (a TOML boolean)",
    "fill": "a string or a number",
    "free": "a model answer (non-empty string)",
}


def _show(value: Any) -> str:
    if isinstance(value, str) and value.startswith("nothing ("):
        return value
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
