"""Names in any case everywhere, with "did you mean …" for a near miss; the Q&A page from the
CLI (issue 13 §5)."""

from __future__ import annotations

import pytest

from tests.fuzz_helpers import assert_clean, error_line, invoke


@pytest.mark.parametrize(("args", "same_as"), [
    (["lesson", "QKV", "--plain"], ["lesson", "qkv", "--plain"]),
    (["LESSON", "Scoring", "--PLAIN"], ["lesson", "scoring", "--plain"]),
    (["trace", "QKV", "--json"], ["trace", "qkv", "--json"]),
    (["trace", "Beam_Search", "--json"], ["trace", "beam-search", "--json"]),
    (["heatmap", "Heatmap-Reading", "--ascii"], ["heatmap", "heatmap-reading", "--ascii"]),
    (["heatmap", "heatmap-reading", "--scale", "ROW", "--ascii"],
     ["heatmap", "heatmap-reading", "--scale", "row", "--ascii"]),
])
def test_a_name_in_any_case_is_the_same_name(args, same_as):
    a, b = invoke(args), invoke(same_as)
    assert_clean(a)
    assert a.code == 0 and a.out == b.out


def test_quiz_modes_and_topics_in_any_case():
    a = invoke(["quiz", "--plain", "--mode", "PRACTICE", "--topic", "Scoring", "--seed", "4",
                "--count", "1"], stdin=":quit\n")
    b = invoke(["quiz", "--plain", "--mode", "practice", "--topic", "scoring", "--seed", "4",
                "--count", "1"], stdin=":quit\n")
    assert a.code == b.code == 0 and a.out.splitlines()[0] == b.out.splitlines()[0]


@pytest.mark.parametrize(("args", "suggestion"), [
    (["lesson", "qvk"], "Did you mean 'qkv'?"),
    (["lesson", "scorng"], "Did you mean 'scoring'?"),
    (["trace", "beam-serch"], "Did you mean 'beam-search'?"),
    (["heatmap", "heatmap-readng"], "Did you mean 'heatmap-reading'?"),
    (["quiz", "--plain", "--topic", "decodng"], "Did you mean 'decoding' or 'exam-decoding'?"),
    (["quiz", "--plain", "--mode", "reveiw"], "Did you mean 'review'?"),
    (["lab", "bottlenek"], "Did you mean 'bottleneck'?"),
    (["lesons"], "Did you mean 'lesson'?"),
])
def test_a_near_miss_gets_did_you_mean(args, suggestion):
    run = invoke(args)
    assert_clean(run)
    assert run.code == 2 and suggestion in error_line(run)


def test_lab_choices_in_any_case():
    run = invoke(["LAB", "Train", "--TASK", "Copy", "--steps", "0"])  # fails after parsing
    assert run.code == 2 and "--steps 0 only makes sense with --load" in error_line(run)


def test_the_questions_students_asked_are_a_lesson_page():
    run = invoke(["lesson", "qa", "--plain"])
    assert_clean(run)
    from tutor.content import load_qa

    first = load_qa()[0]
    assert run.code == 0 and run.out.startswith("Questions students asked")
    assert " ".join(first.question.split()[:4]) in " ".join(run.out.split())
    assert "attn-tutor lesson qa" in invoke(["lesson"]).out
