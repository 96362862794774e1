"""The hand-written quiz bank: load ``lessons/quiz/*.toml``, check it, mark answers.

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

Per kind:

* ``mcq``: ``choices`` = 3–5 distinct non-empty strings; ``answer`` = 0-based index of the
  right choice. The student sees the choices labelled a, b, c… (and may answer 1, 2, 3…).
  ``why_wrong`` is a table, written last in the item as ``[question.why_wrong]``, with one
  line per wrong choice keyed by its letter (``a = "..."``): why that choice is wrong, shown
  when a student picks it. Every wrong choice needs one; the right one has none.
* ``true_false``: ``answer`` = ``true`` or ``false`` (a TOML boolean). The prompt is a
  statement, usually a pitfall; the explanation says why it is true or false.
* ``fill``: ``answer`` is a string (text answer) or a number (numeric answer).
  ``accept`` (optional) lists further strings that also count. A numeric answer needs
  ``tolerance`` (absolute, ≥ 0; shown to the student by :attr:`Question.instructions`).
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
  cached per folder (:func:`clear_cache` empties the cache). Raises :class:`BankError`
  (a ``ValueError``) listing every problem found as ``file: question #n (id 'x'): field 'f':
  expected ..., got ...``.
* :func:`check_answer` ``(question, text) -> Verdict``: ``valid`` False means the text
  cannot be an answer (empty, a letter for a number, a choice out of range…) and ``hint``
  says what to type — ask again, do not count it. Otherwise ``correct`` is True/False, or
  None for ``free`` questions (the caller shows ``expected`` and asks the student to grade).
  Accepted input: mcq ``2``, ``b``, ``B``, ``(b)`` or the choice's text; true/false
  ``t/f/true/false/yes/no/y/n``; numbers as decimals (``0.47``, ``-1e-3``, ``−0.5``) or
  fractions (``3/4``), within ``tolerance``; text compared after :func:`_squash`
  (case, spaces, brackets, ``√`` vs ``sqrt`` and a leading article do not matter).
* :class:`Question` helpers: ``instructions`` (how to answer, stating the tolerance),
  ``answer_text`` (the right answer for display), ``is_numeric``, ``source`` (file name).
* :func:`parse_number` ``(text) -> float | None``: the number reader used for marking.
* :data:`SECTIONS`, :data:`EXAM_TOPICS`: the ids from docs/DEVELOPING.md.
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from tutor.content import EXAM_TOPICS, LESSON_IDS

SECTIONS: tuple[str, ...] = LESSON_IDS
"""Lesson ids in lecture order; every question links to one of them."""

KINDS: tuple[str, ...] = ("mcq", "true_false", "fill", "free")

Kind = Literal["mcq", "true_false", "fill", "free"]

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_LETTERS = "abcde"
_COMMON = {"id", "kind", "section", "exam_topics", "difficulty", "prompt", "answer",
           "explanation", "trace", "hint", "erratum"}
_ALLOWED: dict[str, set[str]] = {
    "mcq": _COMMON | {"choices", "why_wrong"},
    "true_false": set(_COMMON),
    "fill": _COMMON | {"accept", "tolerance"},
    "free": _COMMON | {"key_points"},
}


class BankError(ValueError):
    """The quiz files break the format; ``errors`` holds one message per problem."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("quiz bank: " + (errors[0] if len(errors) == 1 else
                         f"{len(errors)} problems:\n  " + "\n  ".join(errors)))


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
    """mcq only: one line per choice saying why it is wrong ("" for the right choice)."""
    source: str = field(default="", compare=False)
    """File name the item came from (for messages)."""

    @property
    def is_numeric(self) -> bool:
        """A fill-in whose answer is a number (checked with ``tolerance``)."""
        return self.kind == "fill" and isinstance(self.answer, float)

    @property
    def answer_text(self) -> str:
        """The correct answer as the student should see it after answering."""
        if self.kind == "mcq":
            i = int(self.answer)
            return f"{_LETTERS[i]}) {self.choices[i]}"
        if self.kind == "true_false":
            return "true" if self.answer else "false"
        if self.is_numeric:
            text = _fmt(float(self.answer))
            return f"{text} (±{_fmt(self.tolerance or 0.0)})" if self.tolerance else text
        return str(self.answer)

    @property
    def instructions(self) -> str:
        """How to type an answer to this question (states the numeric tolerance)."""
        if self.kind == "mcq":
            n = len(self.choices)
            return f"Answer with a letter a–{_LETTERS[n - 1]} or a number 1–{n}."
        if self.kind == "true_false":
            return "Answer true or false (t/f, yes/no also work)."
        if self.is_numeric:
            tol = self.tolerance or 0.0
            within = f"; anything within ±{_fmt(tol)} counts" if tol else "; give the exact value"
            return f"Type a number (a decimal like 0.25 or a fraction like 3/4){within}."
        if self.kind == "fill":
            return "Type a short answer; case, spaces and √ vs sqrt do not matter."
        return "Write your answer, then compare it with the model answer and grade yourself."


@dataclass(frozen=True)
class Verdict:
    """The result of :func:`check_answer`.

    ``valid`` False: the text cannot be an answer; show ``hint`` and ask again.
    ``correct``: True/False, or None for a self-graded ``free`` question.
    ``reason``: one line to show after marking. ``expected``: the correct/model answer.
    ``why_wrong``: for a wrong multiple-choice pick, one line saying why that choice is wrong
    (``"Why not b: ..."``), to show with the reason.
    """

    valid: bool
    correct: bool | None
    reason: str
    hint: str | None = None
    expected: str = ""
    why_wrong: str | None = None

    @classmethod
    def invalid(cls, hint: str) -> Verdict:
        return cls(valid=False, correct=None, reason="not an answer", hint=hint)


# --------------------------------------------------------------------------- loading

_CACHE: dict[Path, list[Question]] = {}


def default_root() -> Path:
    """``lessons/quiz`` inside the installed package."""
    import lessons

    return Path(lessons.ROOT) / "quiz"


def clear_cache() -> None:
    """Forget loaded banks (tests that edit files call this)."""
    _CACHE.clear()


def load_bank(root: str | Path | None = None) -> list[Question]:
    """All questions under ``root`` (default ``lessons/quiz``), checked; cached per folder.

    Raises:
        BankError: listing every problem (file, item index and id, field, what was expected).
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
        raise BankError([f"{folder}: no such folder; expected the quiz folder with *.toml files"])
    files = sorted(folder.glob("*.toml"))
    if not files:
        raise BankError([f"{folder}: no *.toml files; expected files of [[question]] tables"])
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
        raise BankError(errors)
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
        from tutor.errata import load_errata

        known = {e.id: e for e in load_errata()}
        if erratum_id in known:
            erratum = known[erratum_id].summary
        else:
            it.error("erratum", "the id of an entry in lessons/errata.toml", erratum_id)
    trace = it.text("trace", required=False)
    if trace is not None and not _ID.match(trace):
        it.error("trace", "a trace name like 'scaling' (kebab-case)", trace)

    choices: tuple[str, ...] = ()
    why_wrong: tuple[str, ...] = ()
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
            if len({_squash(c) for c in choices}) != len(choices):
                it.error("choices", "distinct choices", list(choices))
        if isinstance(answer, bool) or not isinstance(answer, int):
            it.error("answer", _ANSWER_EXPECTED[kind], answer)
        elif choices and not 0 <= answer < len(choices):
            it.error("answer", f"a 0-based index 0–{len(choices) - 1} into choices", answer)
        elif choices:
            why_wrong = _why_wrong(it, choices, answer)
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
        why_wrong=why_wrong, source=file,
    )


def _why_wrong(it: _Item, choices: tuple[str, ...], answer: int) -> tuple[str, ...]:
    """The ``[question.why_wrong]`` table as one line per choice ("" for the right one)."""
    raw = it.raw.get("why_wrong")
    wrong = [_LETTERS[i] for i in range(len(choices)) if i != answer]
    expected = "a table with one line for each wrong choice (" + ", ".join(wrong) + ")"
    if not isinstance(raw, dict):
        it.error("why_wrong", expected, raw if "why_wrong" in it.raw else "nothing (missing)")
        return ()
    for letter in sorted(set(raw) - set(wrong)):
        right = letter == _LETTERS[answer]
        it.error("why_wrong", expected + (f"; {letter} is the right answer" if right else
                                          f"; there is no choice {letter}"), letter)
    out = []
    for i in range(len(choices)):
        line = raw.get(_LETTERS[i], "") if i != answer else ""
        if i != answer and (not isinstance(line, str) or not line.strip()):
            it.error("why_wrong", f"a non-empty line for choice {_LETTERS[i]}", line or "nothing (missing)")
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


# --------------------------------------------------------------------------- marking

_TRUE = {"t", "true", "y", "yes"}
_FALSE = {"f", "false", "n", "no"}
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$")
_DROP = re.compile(r"[\s_(){}\[\]*·×⋅<>⟨⟩]+")


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _unify(text: str) -> str:
    """NFKC, lower case, unicode minus/root/dashes to ASCII words."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return (text.replace("−", "-").replace("–", "-").replace("√", "sqrt")
            .replace("’", "'").replace("‘", "'"))


def _squash(text: str) -> str:
    """Normal form for comparing short text answers.

    Case, spaces, brackets, underscores, multiplication signs, surrounding quotes and a
    final full stop are ignored, ``√`` reads as ``sqrt``, and a leading article (a/an/the) is
    dropped: ``"1/√d_k"``, ``"1 / sqrt(dk)"`` and ``"1/SQRT(D_K)"`` all become ``"1/sqrtdk"``.
    ``^`` and inner quotes are kept (``Y^_t`` is not ``Y_t``).
    """
    text = _unify(text).strip().strip("\"'`").rstrip(".!").strip()
    text = re.sub(r"^(?:a|an|the)\s+", "", text)
    return _DROP.sub("", text)


def parse_number(text: str) -> float | None:
    """A plain decimal (``0.47``, ``-1.2e-3``, ``.5``) or a fraction (``3/4``, ``-1/8``)."""
    s = _unify(text).replace(" ", "")
    if not s:
        return None
    if s.count("/") == 1:
        top, bottom = s.split("/")
        if _NUMBER.match(top) and _NUMBER.match(bottom):
            try:
                value = Fraction(top) / Fraction(bottom)
            except (ValueError, ZeroDivisionError):
                return None
            return float(value)
        return None
    if _NUMBER.match(s):
        value = float(s)
        return value if math.isfinite(value) else None
    return None


def _choice_index(text: str, q: Question) -> int | None | str:
    """0-based index, None if unreadable, or "range" if a number/letter outside the choices."""
    s = _unify(text).strip().strip("().:;").strip()
    if s.startswith("option "):
        s = s[7:].strip()
    n = len(q.choices)
    target = _squash(text)
    by_text = next((i for i, c in enumerate(q.choices) if target and target == _squash(c)), None)
    if re.fullmatch(r"\d+", s):
        i = int(s) - 1
        return i if 0 <= i < n else by_text if by_text is not None else "range"
    if re.fullmatch(r"[a-z]", s):
        i = ord(s) - ord("a")
        return i if 0 <= i < n else by_text if by_text is not None else "range"
    return by_text


def check_answer(question: Question, text: str) -> Verdict:
    """Mark the student's typed ``text`` against ``question`` (see :class:`Verdict`)."""
    text = "" if text is None else str(text)
    q = question
    expected = q.answer_text
    if not text.strip():
        return Verdict.invalid("Type an answer first. " + q.instructions)

    if q.kind == "free":
        return Verdict(True, None, "Compare your answer with the model answer and grade yourself.",
                       hint=None, expected=expected)

    if q.kind == "mcq":
        n = len(q.choices)
        got = _choice_index(text, q)
        if got == "range":
            return Verdict.invalid(f"Choose {_LETTERS[0]}–{_LETTERS[n - 1]} (or 1–{n}).")
        if got is None:
            return Verdict.invalid(f"Answer with a letter a–{_LETTERS[n - 1]} or a number 1–{n}.")
        ok = got == q.answer
        reason = ("Right: " if ok else f"You chose {_LETTERS[got]}; the answer is ") + expected + "."
        why = f"Why not {_LETTERS[got]}: {q.why_wrong[got]}" if not ok and q.why_wrong else None
        return Verdict(True, ok, reason, hint=None if ok else q.hint, expected=expected, why_wrong=why)

    if q.kind == "true_false":
        s = _unify(text).strip(" .!")
        if s in _TRUE:
            said = True
        elif s in _FALSE:
            said = False
        else:
            return Verdict.invalid("Answer true or false (t/f, yes/no also work).")
        ok = said == q.answer
        reason = f"The statement is {expected}." if ok else f"No: the statement is {expected}."
        return Verdict(True, ok, reason, hint=None if ok else q.hint, expected=expected)

    # fill
    squashed = _squash(text)
    texts = ([] if q.is_numeric else [str(q.answer)]) + list(q.accept)
    if any(squashed == _squash(t) for t in texts):
        return Verdict(True, True, f"Right: {expected}.", expected=expected)
    if q.is_numeric:
        value = parse_number(text)
        if value is None:
            if re.search(r"\d,\d", text) and parse_number(text.replace(",", ".")) is not None:
                return Verdict.invalid("Use a decimal point, not a comma: 0.5, not 0,5.")
            return Verdict.invalid("Type a number: a decimal like 0.25 or a fraction like 3/4.")
        tol = q.tolerance or 0.0
        ok = abs(value - float(q.answer)) <= tol + 1e-9 * max(1.0, abs(float(q.answer)))
        if ok:
            return Verdict(True, True, f"Right: {expected}.", expected=expected)
        return Verdict(True, False, f"You gave {_fmt(value)}; the answer is {expected}.",
                       hint=q.hint, expected=expected)
    return Verdict(True, False, f"The expected answer is {expected}.", hint=q.hint, expected=expected)
