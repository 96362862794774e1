"""The parser's complaints in the tutor's words, for either wording typer may use (click's
below typer 0.29, pydantic's from it): the pinned typer is exercised end to end by
tests/test_cli_basics.py; these cover the other wording and the range bounds by hand."""

import pytest

from tutor.errors import usage_message


@pytest.mark.parametrize(("message", "argv", "expected"), [
    # click
    ("Invalid value for '--steps': 'abc' is not a valid int.", ["lab", "--steps", "abc"],
     "--steps abc: expected a whole number"),
    ("Invalid value for '--dropout': 'half' is not a valid float.", ["--dropout=half"],
     "--dropout half: expected a number"),
    ("Invalid value for '--steps': 0 is not in the range 1<=x<=100000.", ["--steps", "0"],
     "--steps 0: expected 1 or more"),
    ("Invalid value for '--steps': 100001 is not in the range 1<=x<=100000.", ["--steps", "100001"],
     "--steps 100001: expected at most 100000"),
    ("Invalid value for '--seed': -1 is not in the range x>=0.", ["--seed", "-1"],
     "--seed -1: expected 0 or more"),
    ("Invalid value for '--n': 9 is not in the range x<=5.", ["--n", "9"], "--n 9: expected at most 5"),
    ("Invalid value for '--p': 0.0 is not in the range 0<x<1.", ["--p", "0.0"],
     "--p 0.0: expected more than 0"),
    ("Invalid value for '--p': 1.0 is not in the range 0<x<1.", ["--p", "1.0"],
     "--p 1.0: expected less than 1"),
    ("Invalid value for '-n' / '--count': '1.5' is not a valid int.", ["quiz", "-n", "1.5"],
     "-n 1.5: expected a whole number"),
    # an option with bounds names its type "int range" / "float range"
    ("Invalid value for '--steps': 'abc' is not a valid int range.", ["--steps", "abc"],
     "--steps abc: expected a whole number"),
    ("Invalid value for '--lr': 'fast' is not a valid float range.", ["--lr", "fast"],
     "--lr fast: expected a number"),
    # pydantic (typer ≥ 0.29)
    ("Invalid value for '--steps': Input should be a valid integer, unable to parse string as an "
     "integer", ["--steps", "abc"], "--steps abc: expected a whole number"),
    ("Invalid value for '--seed': Input should be greater than or equal to 0", ["--seed", "-1"],
     "--seed -1: expected 0 or more"),
    # not the parser's type check: left alone
    ("No such option: --bogus", ["--bogus"], "No such option: --bogus"),
])
def test_usage_message(message, argv, expected):
    assert usage_message(message, argv) == expected


def _numeric_options():
    """(command path, option, kind) for every int or float option of every command."""
    import typer

    from tutor.cli import app

    def walk(cmd, path):  # duck-typed: typer 0.28 carries its own copy of click
        if getattr(cmd, "commands", None):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])
            return
        for param in cmd.params:
            if getattr(param, "param_type_name", "") != "option" or param.is_flag:
                continue
            kind = getattr(param.type, "name", "")
            if kind.startswith(("integer", "int")) or kind.startswith("float"):
                yield path, param.opts[-1], "a whole number" if "int" in kind else "a number"

    return sorted(walk(typer.main.get_command(app), []))


NUMERIC_OPTIONS = _numeric_options()


def test_every_numeric_option_is_found():
    assert len(NUMERIC_OPTIONS) > 20
    assert (["lab", "transformer"], "--steps", "a whole number") in NUMERIC_OPTIONS


@pytest.mark.parametrize(("path", "option", "kind"), NUMERIC_OPTIONS,
                         ids=[" ".join([*p, o]) for p, o, _ in NUMERIC_OPTIONS])
def test_every_numeric_option_says_what_it_expected(path, option, kind):
    """The whole class: bounded or not, every number option's type error is in our words."""
    from tests.fuzz_helpers import invoke

    run = invoke([*path, option, "abc"])
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        f"attn-tutor: error: {option} abc: expected {kind} (see `attn-tutor {' '.join(path)} --help`)"]
