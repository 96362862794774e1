"""`attn-tutor trace NAME --practice --plain`: a practice driven through stdin, one answer a
line, as a script or a screen reader would; its bad input, hints, levels and fresh numbers.

The qkv numbers are worked by hand from the notes' example: Q₂ = row 2 of X times W_Q =
[0, 1, 0]; the scores are Q₂·K_j / √3 = [1/√3, 0, 0]; the weights are
[e^(1/√3), 1, 1] / (e^(1/√3) + 2); the output is their first two (V = [[1, 0], [0, 1], [0, 0]]).
"""

from __future__ import annotations

import math

from typer.testing import CliRunner

from engine.mistakes import MISTAKES
from tutor.cli import app
from tutor.practice.content import load_plan
from tutor.render.text import asciify
from tutor.store import open_store
from tutor.store import practice as stored

E = math.exp(1 / math.sqrt(3))
WEIGHTS = [E / (E + 2), 1 / (E + 2), 1 / (E + 2)]
RIGHT = {
    "Q₂": "0, 1, 0",
    "scores": f"{1 / math.sqrt(3):.4f}, 0, 0",
    "weights": ", ".join(f"{w:.4f}" for w in WEIGHTS),
    "output": f"{WEIGHTS[0]:.4f}, {WEIGHTS[1]:.4f}",
}
WHY = [sp.why.choices[sp.why.answer] for sp in load_plan("qkv").steps]  # typed as text


def _practise(args, lines):
    return CliRunner().invoke(app, ["trace", "qkv", "--practice", "--plain", *args],
                              input="".join(line + "\n" for line in lines))


def _level(name="qkv"):
    with open_store() as store:
        record = stored.level_of(store, name)
        return record.level if record else None


def test_a_clean_practice_of_the_whole_problem_on_the_notes_numbers():
    lines = [RIGHT["Q₂"], WHY[0], RIGHT["scores"], WHY[1], RIGHT["weights"], WHY[2],
             RIGHT["output"], WHY[3]]
    result = _practise(["--level", "4"], lines)
    out = result.output
    assert result.exit_code == 0, out
    assert "Level 4 of 4 (every practised step blank: the whole problem); the notes' numbers" in out
    assert out.count("Right: ") == 8 and "Not right" not in out
    assert "Blanks solved: 4 of 4." in out and "Why-questions right: 4 of 4." in out
    assert "A clean practice: next time level 4 of 4 (the same)." in out
    assert "Values:   weights = ?" in out  # blank until solved, then worked
    assert "alpha_1 = 1.7813 / 3.7813 = 0.4711" in out
    assert _level() == 4
    with open_store() as store:
        rows = stored.steps(store, "qkv")
        assert [r.name for r in rows] == ["Q₂", "why", "scores", "why", "weights", "why",
                                          "output", "why"]
        assert all(r.correct and r.attempts == 1 and r.seed is None for r in rows)
        card = store.card(stored.item_id("qkv"))
        assert card is not None and card.topic == "qkv"


def test_the_lectures_commonest_mistake_is_named_with_its_number_and_lesson():
    # q·k = 1 before the 1/√d_k: the issue's own example
    result = _practise(["--level", "3"], ["1, 0, 0", ":quit"])
    out = result.output
    assert result.exit_code == 0, out
    assert "Not right: you gave scores = [1, 0, 0]" in out
    title = asciify(MISTAKES["no-scale"].title)  # plain text is ASCII math
    assert f"Known mistake: {title}; it gives scores = [1, 0, 0] here." in out
    assert f"attn-tutor lesson {MISTAKES['no-scale'].lesson}" in out
    assert "Not right: you gave scores = [1, 0, 0]. Try again (2 tries left) or :hint." in out
    assert "Practice stopped: the answers so far are saved; the level stays 3 of 4." in out


def test_bad_input_is_one_line_and_asked_again():
    result = _practise(["--level", "1"], ["abc", "0.5", "0,5, 1", ""])
    out = result.output
    assert "Not an answer: 'abc' is not a number." in out
    assert "Not an answer: that is 1 number; type 2 numbers separated by commas" in out
    assert "Not an answer: that is 3 numbers; type 2 numbers" in out  # 0,5 is two numbers here
    assert "Not an answer: type an answer first." in out
    assert "Not right" not in out and result.exit_code == 0


def test_the_hint_ladder_then_the_value_which_is_not_solved():
    result = _practise(["--level", "1"], [":hint", ":hint", ":hint", WHY[3]])
    out = result.output
    assert "Hint 1 of 3: Formula: Attention = sum_j alpha_j V_j" in out
    assert "Hint 2 of 3: You need: weights = [0.4711, 0.2645, 0.2645]; V = " in out
    assert "The value (shown by the last hint; this blank counts as not solved): output = " \
           "[0.4711, 0.2645]" in out
    assert "Some blanks were not solved: next time level 0 of 4 (down)." in out
    assert _level() == 0


def test_three_wrong_tries_show_the_value_and_skip_works():
    result = _practise(["--level", "2"], ["0.6, 0.2, 0.2", "0.6, 0.2, 0.2", "0.6, 0.2, 0.2",
                                         WHY[2], ":skip", ":skip"])
    out = result.output
    assert "The value (after 3 tries; this blank counts as not solved): weights = " \
           "[0.4711, 0.2645, 0.2645]" in out
    assert "The value (skipped; this blank counts as not solved): output = [0.4711, 0.2645]" in out
    assert "Skipped: the principle is" in out and "Blanks solved: 0 of 2." in out


def test_study_level_asks_only_why_and_a_clean_one_raises_the_level():
    result = _practise(["--level", "0"], WHY)
    out = result.output
    assert "= ?" not in out and out.count("Why? Step") == 4
    assert "A clean practice: next time level 1 of 4 (up)." in out and _level() == 1


def test_later_practices_use_fresh_numbers_and_a_seed_repeats_them():
    _practise(["--level", "0"], WHY)  # the first practice: the notes' numbers
    first = _practise([], [":quit"]).output
    assert "fresh numbers (seed " in first and "the notes' numbers" not in first
    a = _practise(["--seed", "7"], [":quit"]).output
    b = _practise(["--seed", "7"], [":quit"]).output
    inputs = lambda out: out.split("Inputs", 1)[1].split("Step 1 of", 1)[0]  # noqa: E731
    assert "fresh numbers (seed 7)" in a and inputs(a) == inputs(b)
    assert "use --seed 7 for the same numbers" in a


def test_usage_errors_exit_2_in_one_line():
    runner = CliRunner()
    for args, message in [
        (["trace", "qkv", "--practice", "--level", "9"], "practises at levels 0 to 4"),
        (["trace", "qkv", "--level", "2"], "go with --practice"),
        (["trace", "qkv", "--practice", "--json"], "cannot be combined with --json"),
        (["trace", "nope", "--practice"], "trace"),
        (["trace", "--practice"], "name a trace"),
        (["trace", "qkv", "--practice", "--seed", "-1"], "--seed -1"),
    ]:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        err = result.stderr if result.stderr_bytes is not None else result.output
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
