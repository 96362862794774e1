"""Structured exam questions: the data model and the loader of ``lessons/exam/questions/*.toml``.

A question is a stem and 3–6 lettered parts worth 8–25 marks in all. A part is either

* ``numeric``: its answer comes from a *maker* in :mod:`tutor.exam.numbers` (the engine
  computes it, with fresh numbers per seed); the part names the maker's ``step``. A step that
  uses earlier steps is marked with follow-through, and its part states its ``method`` marks
  (1 to ``marks``; the rest are for accuracy). A value computed correctly from the student's
  own wrong earlier answer earns the part's full marks (error carried forward), unless the
  part says ``follow_through = "method"``: then only the ``method`` marks (which must then be
  fewer than ``marks``: the accuracy marks need the correct value);
* ``text``: self-marked against ``points`` (the student ticks what their answer contains);
  at most ``marks`` are earned however many points are ticked.

Every part has ``mistakes`` (common ways to lose its marks) and a model answer: ``model`` in
the file for text parts, the maker's computed working (plus an optional ``model`` sentence)
for numeric ones.

File format (unknown fields are errors)::

    [[question]]
    id = "xq-encoder-run"              # stable, kebab-case, unique: progress is stored by it
    title = "Running an RNN encoder by hand"
    section = "encoder-decoder"        # lesson id
    exam_topics = ["exam-encoder-decoder"]
    numbers = "encoder-run"            # optional maker; stem and prompts quote its {fields}
    stem = "..."

    [[question.part]]
    kind = "numeric"                   # or "text"
    step = "H1"                        # numeric only: the maker's step
    marks = 3
    method = 2                         # numeric only, required when the step uses earlier steps
    follow_through = "method"          # optional: follow-through earns only the method marks
    prompt = "..."
    points = ["...", "..."]            # text only: at least ``marks`` of them
    mistakes = ["..."]
    model = "..."                      # required for text parts

Parts are lettered a, b, c … in file order. Pure Python: loading imports no numpy.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import lessons
from tutor.content import EXAM_TOPICS, LESSON_IDS
from tutor.content_schema import ContentError

PartKind = Literal["numeric", "text"]
FollowThrough = Literal["all", "method"]

MIN_PARTS, MAX_PARTS = 3, 6
MIN_MARKS, MAX_MARKS = 8, 25
LETTERS = "abcdef"

_ID = re.compile(r"^xq(?:-[a-z0-9]+)+$")
_QUESTION_FIELDS = {"id", "title", "section", "exam_topics", "numbers", "stem", "part"}
_PART_FIELDS = {
    "numeric": {"kind", "step", "marks", "method", "follow_through", "prompt", "mistakes", "model"},
    "text": {"kind", "marks", "prompt", "points", "mistakes", "model"},
}


WHAT = "exam questions"
"""How a :class:`~tutor.content_schema.ContentError` from this loader names what it read."""


@dataclass(frozen=True)
class PartSpec:
    """One lettered part as written in the file (numbers not filled in yet)."""

    letter: str
    kind: PartKind
    marks: int
    prompt: str
    mistakes: tuple[str, ...]
    model: str = ""
    step: str = ""
    method: int = 0
    points: tuple[str, ...] = ()
    follow_through: FollowThrough = "all"
    """What correct working from a wrong earlier value earns: ``all`` the marks (error carried
    forward, the default) or only the ``method`` marks."""


@dataclass(frozen=True)
class QuestionSpec:
    """One structured question as written in the file."""

    id: str
    title: str
    section: str
    exam_topics: tuple[str, ...]
    stem: str
    parts: tuple[PartSpec, ...]
    numbers: str = ""
    source: str = ""

    @property
    def marks(self) -> int:
        return sum(p.marks for p in self.parts)

    @property
    def section_number(self) -> int:
        return LESSON_IDS.index(self.section) + 1


def default_root() -> Path:
    return Path(lessons.ROOT) / "exam" / "questions"


_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FORMAT_SPEC = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*[!:][^{}]*\}")


def fields_of(text: str) -> set[str]:
    """The ``{name}`` placeholders a stem or prompt uses (``H_{t-1}`` is not one)."""
    return set(_FIELD.findall(text))


def fill(text: str, fields: dict[str, str]) -> str:
    """``text`` with each ``{name}`` of ``fields`` replaced; other braces are left alone.

    Raises:
        KeyError: for a ``{name}`` that ``fields`` lacks.
    """
    return _FIELD.sub(lambda m: fields[m.group(1)], text)


@functools.cache
def _load(folder: Path) -> tuple[QuestionSpec, ...]:
    errors: list[str] = []
    out: list[QuestionSpec] = []
    files = sorted(folder.glob("*.toml"))
    if not files:
        raise ContentError([f"{folder}: no *.toml question files"], WHAT)
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            errors.append(f"{path.name}: not valid TOML ({exc})")
            continue
        if set(data) != {"question"} or not isinstance(data["question"], list):
            errors.append(f"{path.name}: expected only [[question]] tables")
            continue
        for n, raw in enumerate(data["question"], 1):
            q = _parse_question(path.name, n, raw, errors)
            if q is not None:
                out.append(q)
    seen: set[str] = set()
    for q in out:
        if q.id in seen:
            errors.append(f"{q.source}: id {q.id!r} is used twice; ids must be unique")
        seen.add(q.id)
    if errors:
        raise ContentError(errors, WHAT)
    return tuple(out)


def load_questions(root: str | Path | None = None) -> tuple[QuestionSpec, ...]:
    """Every structured question, in file-name then file order (cached per folder).

    Raises:
        ContentError: listing every problem found, each naming file, question and field.
    """
    return _load(Path(root) if root is not None else default_root())


def by_id(root: str | Path | None = None) -> dict[str, QuestionSpec]:
    return {q.id: q for q in load_questions(root)}


def _text(raw: dict, name: str, where: str, errors: list[str], required: bool = True) -> str:
    value = raw.get(name)
    if value is None:
        if required:
            errors.append(f"{where}: missing field {name!r} (expected a non-empty string)")
        return ""
    if not isinstance(value, str) or not value.strip():
        errors.append(f"{where}: field {name!r} must be a non-empty string")
        return ""
    return " ".join(value.split()) if name != "stem" else value.strip()


def _texts(raw: dict, name: str, where: str, errors: list[str]) -> tuple[str, ...]:
    value = raw.get(name, [])
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        errors.append(f"{where}: field {name!r} must be a list of non-empty strings")
        return ()
    return tuple(" ".join(x.split()) for x in value)


def _int(raw: dict, name: str, where: str, errors: list[str], default: int | None = None) -> int:
    value = raw.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        errors.append(f"{where}: field {name!r} must be a whole number ≥ 0, got {value!r}")
        return 0
    return value


def _parse_question(file: str, n: int, raw: Any, errors: list[str]) -> QuestionSpec | None:
    where = f"{file}: question #{n}"
    if not isinstance(raw, dict):
        errors.append(f"{where}: expected a table")
        return None
    where += f" ({raw.get('id', '?')})"
    before = len(errors)
    for name in sorted(set(raw) - _QUESTION_FIELDS):
        errors.append(f"{where}: unknown field {name!r}; expected only "
                      + ", ".join(sorted(_QUESTION_FIELDS)))
    qid = _text(raw, "id", where, errors)
    if qid and not _ID.match(qid):
        errors.append(f"{where}: id {qid!r} must look like 'xq-some-words'")
    section = _text(raw, "section", where, errors)
    if section and section not in LESSON_IDS:
        errors.append(f"{where}: section {section!r} is not a lesson id ({', '.join(LESSON_IDS)})")
    topics = _texts(raw, "exam_topics", where, errors)
    for t in topics:
        if t not in EXAM_TOPICS:
            errors.append(f"{where}: exam topic {t!r} is not one of {', '.join(EXAM_TOPICS)}")
    numbers = _text(raw, "numbers", where, errors, required=False)
    stem = _text(raw, "stem", where, errors)
    if _FORMAT_SPEC.search(stem):
        errors.append(f"{where}: write a field as {{name}}, without a conversion or format")
    parts_raw = raw.get("part", [])
    if not isinstance(parts_raw, list) or not MIN_PARTS <= len(parts_raw) <= MAX_PARTS:
        errors.append(f"{where}: needs {MIN_PARTS}–{MAX_PARTS} [[question.part]] tables, got "
                      f"{len(parts_raw) if isinstance(parts_raw, list) else parts_raw!r}")
        parts_raw = parts_raw if isinstance(parts_raw, list) else []
    parts = tuple(p for i, r in enumerate(parts_raw[:MAX_PARTS])
                  if (p := _parse_part(f"{where} part ({LETTERS[i]})", LETTERS[i], r, numbers,
                                       errors)) is not None)
    total = sum(p.marks for p in parts)
    if parts and not MIN_MARKS <= total <= MAX_MARKS:
        errors.append(f"{where}: worth {total} marks; a question is worth {MIN_MARKS}–{MAX_MARKS}")
    if len(errors) > before:
        return None
    return QuestionSpec(qid, _text(raw, "title", where, errors), section, topics, stem, parts,
                        numbers, file)


def _parse_part(where: str, letter: str, raw: Any, numbers: str,
                errors: list[str]) -> PartSpec | None:
    if not isinstance(raw, dict):
        errors.append(f"{where}: expected a table")
        return None
    kind = raw.get("kind")
    if kind not in _PART_FIELDS:
        errors.append(f"{where}: kind must be 'numeric' or 'text', got {kind!r}")
        return None
    before = len(errors)
    for name in sorted(set(raw) - _PART_FIELDS[kind]):
        errors.append(f"{where}: unknown field {name!r} for a {kind} part; expected only "
                      + ", ".join(sorted(_PART_FIELDS[kind])))
    marks = _int(raw, "marks", where, errors)
    if marks < 1:
        errors.append(f"{where}: a part is worth at least 1 mark")
    prompt = _text(raw, "prompt", where, errors)
    spec = _FORMAT_SPEC.search(prompt)
    if spec:
        errors.append(f"{where}: write a field as {{name}}, without a conversion or format "
                      f"({spec.group(0)})")
    mistakes = _texts(raw, "mistakes", where, errors)
    if not mistakes:
        errors.append(f"{where}: list at least one common mistake in 'mistakes'")
    if kind == "numeric":
        if not numbers:
            errors.append(f"{where}: a numeric part needs the question's 'numbers' maker")
        step = _text(raw, "step", where, errors)
        method = _int(raw, "method", where, errors, default=0)
        if method > marks > 0:
            errors.append(f"{where}: method marks ({method}) are more than the part's {marks}")
        carried = raw.get("follow_through", "all")
        if carried not in ("all", "method"):
            errors.append(f"{where}: follow_through must be 'all' (error carried forward) or "
                          f"'method' (only the method marks), got {carried!r}")
        elif carried == "method" and not 0 < method < marks:
            errors.append(f"{where}: follow_through = 'method' needs method marks from 1 to "
                          f"{marks - 1}: the other marks are for the correct value")
        model = _text(raw, "model", where, errors, required=False)
        if len(errors) > before:
            return None
        return PartSpec(letter, "numeric", marks, prompt, mistakes, model, step, method,
                        follow_through=carried)
    points = _texts(raw, "points", where, errors)
    if len(points) < marks:
        errors.append(f"{where}: {len(points)} points for {marks} marks; give at least one "
                      "point per mark")
    model = _text(raw, "model", where, errors)
    if len(errors) > before:
        return None
    return PartSpec(letter, "text", marks, prompt, mistakes, model, points=points)
