"""The shared schema of the reading material in ``lessons/``: the lesson and exam-topic ids,
the error every loader raises, and the field checks they use (see :mod:`tutor.content` for
the layout). Pure Python, like the loaders.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import lessons

LESSON_IDS: tuple[str, ...] = (
    "encoder-decoder",
    "context-vector",
    "teacher-forcing",
    "attention-intro",
    "qkv",
    "self-attention",
    "cross-attention",
    "scoring",
    "pooling",
    "decoding",
    "visualisation",
    "training",
    "transformer",
)
"""The lesson ids (= quiz topics); section n is ``LESSON_IDS[n-1]``. The first twelve are the
lecture's sections in order; ``transformer`` (13) goes beyond the notes, to the model the
lab trains."""

LECTURE_SECTIONS = 12
"""How many of the lessons are sections of the lecture notes."""

EXAM_TOPICS: tuple[str, ...] = (
    "exam-encoder-decoder",
    "exam-bottleneck",
    "exam-teacher-forcing",
    "exam-attention",
    "exam-qkv",
    "exam-self-vs-cross",
    "exam-scaled-dot",
    "exam-decoding",
    "exam-cross-entropy",
    "exam-positions",
    "exam-transformer",
)
"""The exam revision topics: the notes' nine "Exam Revision Notes" in their order, then the two
of the Transformer lesson (positions; layers, heads and cost)."""

class ContentError(ValueError):
    """Reading material breaks its schema — a lesson, a card, the errata, the quiz bank, an exam
    question: the one error every content loader raises. The message names the file, the
    field and the fix; ``errors`` holds one line per problem (a loader that checks everything
    before it complains passes them all, and ``what`` names the collection they belong to).
    """

    def __init__(self, errors: str | list[str], what: str = ""):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        message = (self.errors[0] if len(self.errors) == 1 else
                   f"{len(self.errors)} problems:\n  " + "\n  ".join(self.errors))
        super().__init__(f"{what}: {message}" if what else message)


# --------------------------------------------------------------------------- checks

_STR, _INT, _STRS, _TABLES = "a string", "an integer", "a list of strings", "a list of tables"

_KINDS = {
    _STR: lambda v: isinstance(v, str) and v.strip() != "",
    _INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
    _STRS: lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v),
    _TABLES: lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
}


def _check_fields(
    data: Mapping[str, Any],
    schema: Mapping[str, tuple[str, bool]],
    where: str,
) -> None:
    """Check required fields are present, every field has its type, and nothing is unknown."""
    for name, (kind, required) in schema.items():
        if name not in data:
            if required:
                raise ContentError(f"{where}: missing field '{name}' (expected {kind})")
            continue
        value = data[name]
        if not _KINDS[kind](value):
            shown = repr(value) if len(repr(value)) < 60 else type(value).__name__
            what = f"{kind}, not empty" if kind == _STR else kind
            raise ContentError(f"{where}: field '{name}' is {shown}; expected {what}")
    unknown = sorted(set(data) - set(schema))
    if unknown:
        raise ContentError(
            f"{where}: unknown field '{unknown[0]}'; expected only: " + ", ".join(schema)
        )


def _check_choice(value: str | list[str], allowed: tuple[str, ...], where: str, name: str) -> None:
    for v in [value] if isinstance(value, str) else value:
        if v not in allowed:
            raise ContentError(
                f"{where}: field '{name}' has {v!r}; expected one of: " + ", ".join(allowed)
            )


def _rel(path: Path, root: Path) -> str:
    """The path as the message shows it: ``lessons/sections/05-qkv.md``."""
    try:
        return str(Path(root.name) / path.relative_to(root))
    except ValueError:
        return str(path)


def _read_toml(path: Path, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContentError(f"{where}: file is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{where}: not valid TOML ({exc})") from None


def _root(root: Path | None) -> Path:
    if root is not None:
        return Path(root)

    return lessons.ROOT
