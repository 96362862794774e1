"""Numbers as students type them (issue 13 §4): one reader, ``tutor.marking.read_number``,
for bank questions and generated problems alike. Expected values are hand arithmetic."""

from __future__ import annotations

import math

import pytest

from tutor.marking import read_number
from tutor.quiz.bank import Question
from tutor.quiz.generators import Part
from tutor.quiz.marking import check_answer


def numeric(answer: float, tolerance: float = 0.0) -> Question:
    return Question(id="n", kind="fill", section="scoring", prompt="How many?", answer=answer,
                    explanation=".", difficulty=1, tolerance=tolerance)


@pytest.mark.parametrize(("typed", "value"), [
    ("25,600,000", 25_600_000.0),   # the prompts themselves write 50,000
    ("50,000", 50_000.0), ("470,400", 470_400.0),
    ("1,234,567.5", 1_234_567.5), ("25 600 000", 25_600_000.0), ("25\u2009600\u2009000", 25_600_000.0),
    ("√64", 8.0), ("sqrt(64)", 8.0), ("sqrt 64", 8.0), ("1/√4", 0.5),
    ("≈0.367", 0.367), ("~0.367", 0.367),
    ("2^-3", 0.125), ("2**-3", 0.125), ("2^(-3)", 0.125), ("2⁻³", 0.125), ("10⁶", 1e6),
    ("1e-3", 0.001), ("1E-3", 0.001), ("3×10^8", 3e8), ("3*10^8", 3e8),
    ("3/4", 0.75), ("½", 0.5), ("−0.5", -0.5), (".5", 0.5), ("(1+2)/4", 0.75),
])
def test_accepted_forms_read_as_their_value(typed, value):
    assert read_number(typed).value == value


@pytest.mark.parametrize(("typed", "hint"), [
    ("0,367", "could be 0.367 or 367"),   # a decimal comma or a digit group? ask, never mark
    ("-0,125", "could be -0.125 or -125"),
    ("0,5", "decimal point"), ("1,5", "decimal point, not a comma: 1.5, not 1,5"),
    ("1,2,3", "not a list"), ("1; 2", "not a list"), ("1 2", "not a list"), ("1 2/3", "not a list"),
    ("1/0", "finite"), ("sqrt(-1)", "finite"), ("2^5000", "finite"),
    ("7" * 60, "50 digits"), ("7" * 5000, "at most 100"),
])
def test_ambiguous_or_broken_forms_get_a_hint(typed, hint):
    reading = read_number(typed)
    assert reading.value is None and hint in reading.hint


def test_a_bank_question_accepts_every_form_and_never_marks_an_ambiguous_one_wrong():
    q = numeric(25_600_000.0)
    assert check_answer(q, "25,600,000").correct is True
    assert check_answer(q, "2.56e7").correct is True
    root = numeric(8.0)
    for typed in ("√64", "sqrt(64)", "2^3", "≈8"):
        assert check_answer(root, typed).correct is True, typed
    v = check_answer(numeric(0.367, 0.001), "0,367")
    assert v.valid is False and v.correct is None and "0.367" in v.hint
    assert check_answer(numeric(0.125), "2^-3").correct is True


def test_a_generated_part_reads_numbers_the_same_way():
    part = Part("p =", "number", 0.125)
    assert part.check("2^-3").correct is True and part.check("1/8").correct is True
    assert part.check("0,125").valid is False
    vec = Part.vector("v =", [0.5, 2.0])
    assert vec.check("[1/2, sqrt(4)]").correct is True
    assert vec.check("√0.25, 2").correct is True


def test_a_5000_digit_answer_is_refused_not_fatal():
    mcq = Question(id="m", kind="mcq", section="qkv", prompt="?", answer=1, explanation=".",
                   difficulty=1, choices=("a", "b", "c"))
    for q in (mcq, numeric(1.0)):
        v = check_answer(q, "7" * 5000)
        assert v.valid is False and v.hint
    assert check_answer(mcq, "x" * 5000).valid is False  # over the answer length limit


# ------------------------------------------------------------------ functions students type
# issue 34 §2: tanh(…) was refused while exp, ln and √ were accepted. Values by hand:
# tanh(0.5) = (e − 1)/(e + 1) with e = e^1 = 2.718281828 → 1.718281828/3.718281828.

@pytest.mark.parametrize(("typed", "value"), [
    ("tanh(0.5)", (math.e - 1) / (math.e + 1)), ("tanh 0.5", (math.e - 1) / (math.e + 1)),
    ("2tanh(0)", 0.0), ("sin(0)", 0.0), ("cos(0)", 1.0), ("tan(0)", 0.0), ("sin(π/2)", 1.0),
    ("log(e)", 1.0), ("ln(e^2)", 2.0), ("log10(1000)", 3.0), ("log2(8)", 3.0),
    ("-log(1/e)", 1.0),  # log is the natural log, as in the notes' cross-entropy −log P
])
def test_the_functions_students_type_are_read(typed, value):
    assert read_number(typed).value == pytest.approx(value, abs=1e-12)


def test_a_wrong_answer_with_log_says_what_log_means():
    """log is ambiguous (base 10 on a calculator): a wrong answer that used it is told it was
    read as ln; a right one is not lectured."""
    part = Part("L =", "number", 1.2040, tolerance=0.01)  # −ln 0.3 = 1.2040 by hand
    right, base10 = part.check("-log(0.3)"), part.check("-log10(0.3)")
    assert right.correct is True and "ln" not in right.reason
    assert base10.correct is False and "log10" not in base10.reason  # named its base: no note
    wrong = part.check("-log(0.5)")
    assert wrong.correct is False and "natural log" in wrong.reason
    assert check_answer(numeric(1.2040, 0.01), "log(2)").reason.endswith(
        "(log is read as ln (the natural log, as in the notes); type log10(…) for base 10.)")
