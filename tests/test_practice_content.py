"""The practice plans (lessons/practice/*.toml): one per trace, each fitting its trace, every
asked value one the catalogue can check, every prompt a real choice; a broken file is one
line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

import lessons
from engine.mistakes import checkable
from engine.traces import REGISTRY, build
from tutor.content_schema import ContentError
from tutor.practice.answers import is_flags, is_words
from tutor.practice.content import Ask, check_against, load_plan, localise

TRACES = list(REGISTRY)


def test_every_trace_has_a_plan_and_nothing_else_does():
    files = {p.stem for p in (lessons.ROOT / "practice").glob("*.toml")}
    assert files == set(TRACES)


@pytest.mark.parametrize("name", TRACES)
def test_the_plan_fits_its_trace(name):
    plan = load_plan(name)
    trace = build(name)
    assert check_against(plan, trace) == []
    assert localise(plan, trace, trace) == plan  # on its own numbers, nothing is renamed
    keys = {k.split("@")[0] for k in checkable(name)}
    for sp in plan.steps:
        for ask in sp.asks:
            value = trace.steps[sp.index].values[ask.name]
            if not (is_words(value) or is_flags(value)):
                assert ask.name in keys, f"{name}: {ask.label} is not checkable"
        why = sp.why
        assert 3 <= len(why.choices) <= 4 and 0 <= why.answer < len(why.choices)
        assert why.prompt.endswith("?") and len(why.reason) > 40


def test_prompts_are_written_per_step_not_generic():
    prompts = [sp.why.prompt for name in TRACES for sp in load_plan(name).steps]
    reasons = [sp.why.reason for name in TRACES for sp in load_plan(name).steps]
    assert len(set(prompts)) == len(prompts) and len(set(reasons)) == len(reasons)


def test_ask_names_a_row_with_brackets():
    assert Ask.parse("A[3]") == Ask("A", 3) and Ask.parse("A[3]").label == "A[3]"
    assert Ask.parse("P_T=0.5") == Ask("P_T=0.5")
    assert Ask("A", 2).pick([[1, 2], [3, 4]]) == [3, 4]


GOOD = '''trace = "qkv"

[[step]]
step = 6
ask = ["weights"]
needs = ["scores"]

[step.why]
prompt = "Why?"
choices = ["a", "b", "c"]
answer = 1
reason = "Because."
'''


def _write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "practice"
    folder.mkdir(exist_ok=True)
    (folder / "qkv.toml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('trace = "qkv"', 'trace = "scores"'), "expected 'qkv'"),
    (lambda t: t.replace('answer = 1', 'answer = 4'), "expected 1 to 3"),
    (lambda t: t.replace('choices = ["a", "b", "c"]', 'choices = ["a", "b"]'), "3 or 4"),
    (lambda t: t.replace('choices = ["a", "b", "c"]', 'choices = ["a", "a", "c"]'), "the same"),
    (lambda t: t.replace('ask = ["weights"]', 'ask = []'), "'ask'"),
    (lambda t: t.replace('step = 6', 'step = 6\nmark = 3'), "unknown field 'mark'"),
    (lambda t: t.split("[step.why]")[0], "missing table 'why'"),
    (lambda t: t + t.split('trace = "qkv"')[1], "each once, in increasing order"),
    (lambda t: t.replace("answer = 1", "answer = 1\n["), "not valid TOML"),
])
def test_a_broken_plan_is_one_line_naming_the_field(tmp_path, change, message):
    root = _write(tmp_path, change(GOOD))
    with pytest.raises(ContentError, match=message) as info:
        load_plan("qkv", root)
    assert "\n" not in str(info.value) and "practice/qkv.toml" in str(info.value)


def test_a_plan_that_does_not_fit_its_trace_is_reported(tmp_path):
    root = _write(tmp_path, GOOD.replace('ask = ["weights"]', 'ask = ["weights[9]", "nope"]')
                  .replace('needs = ["scores"]', 'needs = ["later"]'))
    problems = check_against(load_plan("qkv", root), build("qkv"))
    assert any("past the end" in p for p in problems)
    assert any("'nope' is not one of its values" in p for p in problems)
    assert any("need 'later'" in p for p in problems)
