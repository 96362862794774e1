"""One rule, one place (issue 35): the quiz and exam wings share one marking module, one
number format with one matrix notation and one content error, and import nothing private
from each other. Read from the source, so a re-copied rule is caught when it is written."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

import tutor
from engine.format import matrix, value
from tutor.content_schema import ContentError

TUTOR = Path(tutor.__file__).parent


def _sources():
    for path in sorted(TUTOR.rglob("*.py")):
        yield path, path.read_text(encoding="utf-8")


def _wing(module: str) -> str:
    """``tutor.quiz.bank`` → ``quiz``; a top-level module is its own wing."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else module


def test_no_private_name_is_imported_across_wings():
    crossings = []
    for path, source in _sources():
        here = "tutor." + ".".join(path.relative_to(TUTOR).with_suffix("").parts)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tutor."):
                private = [a.name for a in node.names if a.name.startswith("_")]
                if private and _wing(node.module) != _wing(here) and {_wing(here), _wing(node.module)} <= {
                        "quiz", "exam", "marking", "render", "screens", "widgets", "commands"}:
                    crossings.append(f"{here} imports {private} from {node.module}")
    assert not crossings


def test_the_tolerance_rule_and_the_command_words_live_only_in_tutor_marking():
    for path, source in _sources():
        if path.name == "marking.py" and path.parent == TUTOR:
            continue
        assert "1e-9 * max(" not in source, f"{path}: the tolerance rule is tutor.marking.within"
        assert not re.search(r"""["']:(quit|skip|hint)["']""", source), \
            f"{path}: the command words are tutor.marking.COMMAND_WORDS"


def test_one_content_error_for_every_content_loader(tmp_path):
    from tutor.exam.model import load_questions
    from tutor.quiz.bank import load_bank

    for loader in (load_bank, load_questions):
        try:
            loader(tmp_path)
        except ContentError as exc:
            assert exc.errors and str(exc).count(":") >= 2
        else:
            raise AssertionError(f"{loader.__name__} read an empty folder")


def test_one_matrix_notation_everywhere():
    """A trace's step text, a quiz prompt and an exam question write [[1, 0], [0.5, -2]] alike."""
    from tutor.quiz.generators import generate
    from tutor.render.numbers import matrix as tutor_matrix

    W = np.array([[1.0, 0.0], [0.5, -2.0]])
    assert matrix(W) == value(W) == tutor_matrix(W) == "[1, 0; 0.5, -2]"
    problem = generate("rnn-step", 0)  # its prompt shows W_HX and W_HH
    shown = re.findall(r"\[[^\[\]]*;[^\[\]]*\]", problem.prompt)
    assert shown and all(re.fullmatch(r"\[[-0-9., ]+(; [-0-9., ]+)+\]", m) for m in shown)
    assert "]; [" not in problem.prompt
