"""``--set NAME=VALUE`` and ``--file inputs.toml`` parsing: data only, never evaluated."""

from __future__ import annotations

import pytest

from tutor.errors import UserError
from tutor.inputs import gather_inputs, load_input_file, parse_sets, parse_value


@pytest.mark.parametrize("text, expected", [
    ("0.5", 0.5),
    ("-1e-3", -0.001),
    ("1, 0, -1", [1.0, 0.0, -1.0]),
    ("1 0 -1", [1.0, 0.0, -1.0]),
    ("[1, 0, -1]", [1, 0, -1]),
    ("1,0,-1; 0,1,-1", [[1.0, 0.0, -1.0], [0.0, 1.0, -1.0]]),
    ("[[1,0,-1],[0,1,-1]]", [[1, 0, -1], [0, 1, -1]]),
    ("my feet hurt", ["my", "feet", "hurt"]),
    ('["my", "feet"]', ["my", "feet"]),
    ("the,cat", ["the", "cat"]),
    ("<start>", "<start>"),
    ("true", True),
    ("False", False),
    ("\u22120.2", -0.2),  # a Unicode minus, as pasted from notes or a PDF
    ("0.5, \u22120.2", [0.5, -0.2]),
    ("1, \u22121; \u22121, 1", [[1.0, -1.0], [-1.0, 1.0]]),
])
def test_parse_value(text, expected):
    assert parse_value(text) == expected


@pytest.mark.parametrize("text, message", [
    ("", "value: empty value; expected a number, a list like '1,0,-1' or a matrix like '1,0; 0,1'"),
    ("1,a", "value: got 'a' in '1,a', expected numbers separated by commas"),
    ("1,a; 2,3", "value: got 'a', expected a number"),
    ("1,0;;0,1", "value: empty row in '1,0;;0,1'; expected rows like '1,0; 0,1'"),
    ("inf", "value: got 'inf', expected finite numbers (no inf or nan)"),
    ("1, nan", "value: got '1, nan', expected finite numbers (no inf or nan)"),
    ("[1, 2", "value: could not read '[1, 2' as JSON (Expecting ',' delimiter at column 6)"),
    ('{"a": 1}', "value: expected a number, list or matrix, got a JSON object"),
    ("[1, NaN]", "value: contains a value that is not a finite number"),
])
def test_parse_value_errors_are_one_line(text, message):
    with pytest.raises(UserError) as err:
        parse_value(text)
    assert str(err.value) == message


def test_nothing_is_evaluated():
    assert parse_value("__import__('os')") == "__import__('os')"
    assert parse_value("2+2") == "2+2"


def test_parse_sets():
    assert parse_sets(["Q=1,0,-1", "K = [0,1,-1]", "tokens=I love cats"]) == {
        "Q": [1.0, 0.0, -1.0], "K": [0, 1, -1], "tokens": ["I", "love", "cats"]}
    with pytest.raises(UserError, match=r"^--set 'Q': expected NAME=VALUE"):
        parse_sets(["Q"])
    with pytest.raises(UserError, match=r"^--set '1x=2': '1x' is not an input name"):
        parse_sets(["1x=2"])


def test_input_file_and_precedence(tmp_path):
    f = tmp_path / "inputs.toml"
    f.write_text('Q = [1, 0, -1]\nK = "0,1,-1; 1,1,1"\ntokens = ["a", "b"]\nposition = 2\n')
    assert load_input_file(f) == {"Q": [1, 0, -1], "K": [[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]],
                                  "tokens": ["a", "b"], "position": 2}
    assert gather_inputs(["position=3"], f)["position"] == 3.0


@pytest.mark.parametrize("body, message", [
    ("Q = [1, 0", "not valid TOML"),
    ("[table]\nQ = 1\n", "[table] is a table; expected top-level NAME = value lines"),
])
def test_input_file_errors(tmp_path, body, message):
    f = tmp_path / "bad.toml"
    f.write_text(body)
    with pytest.raises(UserError) as err:
        load_input_file(f)
    assert str(err.value).startswith(f"--file {f}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_input_file(tmp_path):
    with pytest.raises(UserError, match="no such file; expected a TOML file of NAME = value lines"):
        load_input_file(tmp_path / "nope.toml")


def test_a_folder_is_not_called_a_missing_file(tmp_path):
    with pytest.raises(UserError) as err:
        load_input_file(tmp_path)
    assert str(err.value) == f"--file {tmp_path}: is a folder; expected a TOML file of NAME = value lines"


# --------------------------------------------------------------------------- both ways

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tutor.inputs import format_value, trace_command, trace_target  # noqa: E402

_floats = st.floats(allow_nan=False, allow_infinity=False)
_values = st.one_of(
    _floats,
    st.integers(min_value=-(2**53), max_value=2**53),
    st.booleans(),
    st.text(),
    st.lists(_floats, max_size=6),
    st.integers(1, 4).flatmap(lambda cols: st.lists(st.lists(_floats, min_size=cols, max_size=cols),
                                                    min_size=1, max_size=4)),
    st.lists(st.text(), min_size=1, max_size=5),
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(_values)
def test_format_value_reads_back_to_the_same_value(value):
    assert parse_value(format_value(value)) == value


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True), _values,
                       max_size=4))
def test_a_trace_command_reads_back_to_its_name_and_inputs(inputs):
    assert trace_target(trace_command("scores", inputs)) == ("scores", inputs)


@pytest.mark.parametrize("value, text", [
    (0.25, "0.25"),                                  # shortest exact form
    (1.0, "1"),
    ([1.0, 0.0, -1.0], "1, 0, -1"),
    ([[1.0, 0.0], [0.5, -2.0]], "1, 0; 0.5, -2"),
    ([[0.6, 0.3]], "[[0.6, 0.3]]"),                  # one row would read back as a vector
    ([1.0], "[1]"),                                  # one entry would read back as a number
    (["my", "feet", "hurt"], "my feet hurt"),
    (["cat"], '["cat"]'),                            # one word would read back as a string
    ("my feet", '"my feet"'),                        # a string with a space would split
    (["1", "2"], '["1", "2"]'),                      # words that look like numbers stay words
    ("true", '"true"'),
    (True, "true"),
])
def test_format_value_by_hand(value, text):
    assert format_value(value) == text


def test_format_value_rounds_only_when_asked():
    assert format_value(2 ** -0.5) == "0.7071067811865476"
    assert format_value(2 ** -0.5, digits=6) == "0.707107"
