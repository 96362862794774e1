"""Hypothesis over every parser a student's input reaches (issue 14 §5, the normal run).

Each parser either returns a value that satisfies its contract or raises ``UserError`` with
one short line; nothing else may escape. Round trips check the values too: a matrix written
as CSV (any delimiter, with or without labels) loads back exactly; a number written the ways
students write it reads back to the number. Bounded and derandomized: a few seconds, the same
cases every run. Each property is a plain ``prop_*`` function with its strategy beside it;
``tests/test_fuzz_slow.py`` runs the same properties with many more examples (CI runs both).
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_helpers import MAX_LINE
from tutor.errors import UserError
from tutor.heatmap.load import load_matrix
from tutor.inputs import load_input_file, parse_sets, parse_value
from tutor.marking import parse_number
from tutor.quiz.marking import check_answer

BASE = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fast(n: int):
    """Settings for the normal run: ``n`` examples, derandomized."""
    return settings(BASE, max_examples=n)


_TMP = Path(tempfile.mkdtemp(prefix="attn-fuzz-"))

# pieces a student (or a copy-paste accident) puts into a value
EDGE = ["0", "-1", "1e-3", "1e400", "-1e400", "inf", "-inf", "nan", "NaN", "7" * 60, "7" * 5000,
        "²", "٣", "½", "−0.2", "0x10", "1_000", ".", "-", "e", "true", "false", "null", "None",
        "[", "]", "{", "}", "[[", "]]", '"', "'", ",", ";", ";;", ",,", "\t", "\n", "\x00", "\x1b[31m",
        "my", "feet", "</s>", "<pad>", "[the, a]", "x" * 200, "=", "#", "\\", "\ufeff"]
pieces = st.one_of(st.sampled_from(EDGE), st.text(max_size=6),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.integers(-10**20, 10**20).map(str))
junk = st.lists(pieces, max_size=12).map("".join)
nested = st.integers(1, 60).map(lambda n: "[" * n + "1" + "]" * n)
values = st.one_of(junk, nested, st.text(max_size=40))


def _short_user_error(exc: UserError) -> None:
    text = str(exc)
    assert "\n" not in text.strip() and len(text) < MAX_LINE, text[:500]


_REFUSED = object()


def _or_refused(fn, *args):
    """``fn(*args)``, or :data:`_REFUSED` when it raised a (short, one-line) ``UserError``."""
    try:
        return fn(*args)
    except UserError as exc:
        _short_user_error(exc)
        return _REFUSED


# --------------------------------------------------------------------------- --set and --file


def prop_parse_value(text):
    value = _or_refused(parse_value, text)
    if value is _REFUSED:
        return
    assert isinstance(value, (bool, float, int, str, list))
    if isinstance(value, list) and value and isinstance(value[0], float):
        assert all(math.isfinite(v) for v in value)


set_items = st.lists(st.tuples(st.text(max_size=8), values).map(lambda nv: f"{nv[0]}={nv[1]}")
                     | st.text(max_size=20), max_size=4)


def prop_parse_sets(items):
    out = _or_refused(parse_sets, items)
    assert out is _REFUSED or all(isinstance(k, str) and k for k in out)


toml_lines = st.one_of(
    st.tuples(st.sampled_from(["Q", "K", "tokens", "a.b", "[t]", "x y", ""]), values)
    .map(lambda kv: f"{kv[0]} = {kv[1]}"),
    st.sampled_from(["[table]", "[[arr]]", "Q = [[1, 0], [0, 1]]", 'tokens = "my feet hurt"',
                     "a." * 30 + "b = 1", "Q = " + "[" * 40 + "]" * 40, "x = 1979-05-27",
                     "x = 0x7f", "x = inf", "x = nan", 'x = """', "x = '''a'''"]),
    st.text(max_size=30),
)


toml_text = st.lists(toml_lines, max_size=6).map("\n".join)


def prop_input_file(text):
    path = _TMP / "in.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    data = _or_refused(load_input_file, path)
    assert data is _REFUSED or isinstance(data, dict)


# --------------------------------------------------------------------------- heatmap files

cells = st.one_of(st.floats(-2, 2).map(repr), st.sampled_from(["", " ", "nan", "inf", "x", "1,5",
                                                              "0.5;0.2", "7" * 60, "−0.3", "#"]),
                  st.text(max_size=5))
csv_text = st.tuples(st.sampled_from([",", ";", "\t", ", ", ";;"]),
                     st.lists(st.lists(cells, min_size=1, max_size=5), min_size=1, max_size=5)
                     ).map(lambda d_rows: "\n".join(d_rows[0].join(r) for r in d_rows[1]))
json_text = st.one_of(
    st.recursive(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-3, 3),
                           st.text(max_size=3), st.booleans(), st.none()),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                     st.sampled_from(["weights", "rows", "cols", "title", "x"]), inner, max_size=4),
                 max_leaves=20).map(json.dumps),
    nested, st.text(max_size=30))


def _load(suffix: str, data: bytes):
    path = _TMP / f"w{suffix}"
    path.write_bytes(data)
    loaded = _or_refused(load_matrix, path)
    return None if loaded is _REFUSED else loaded


def _check_loaded(loaded) -> None:
    if loaded is None:
        return
    w = loaded.weights
    assert w.ndim == 2 and w.size and np.all(np.isfinite(w)) and max(w.shape) <= 256
    assert loaded.rows is None or len(loaded.rows) == w.shape[0]
    assert loaded.cols is None or len(loaded.cols) == w.shape[1]


def prop_csv(suffix, text):
    _check_loaded(_load(suffix, text.encode("utf-8", "surrogatepass")))


def prop_json(text):
    _check_loaded(_load(".json", text.encode("utf-8", "surrogatepass")))


def prop_bytes(data, suffix):
    _check_loaded(_load(suffix, b"\x93NUMPY" + data if suffix == ".npy" and data[:1] == b"\x01" else data))


words = st.from_regex(r"[a-z][a-z']{0,5}", fullmatch=True)


tables = st.integers(1, 6).flatmap(lambda c: st.tuples(
    st.lists(st.lists(st.floats(-1e6, 1e6), min_size=c, max_size=c), min_size=1, max_size=6),
    st.lists(words, min_size=c, max_size=c)))


def prop_csv_round_trip(rows_cols, delimiter, labelled):
    matrix, cols = rows_cols
    lines = []
    if labelled:
        lines.append(delimiter.join([""] + cols))
    for i, row in enumerate(matrix):
        lines.append(delimiter.join(([f"r{i}"] if labelled else []) + [repr(x) for x in row]))
    loaded = _load(".csv", "\n".join(lines).encode())
    assert loaded is not None
    assert loaded.weights.tolist() == [[float(x) for x in row] for row in matrix]
    if labelled:
        assert loaded.cols == cols and loaded.rows == [f"r{i}" for i in range(len(matrix))]


# --------------------------------------------------------------------------- typed answers


def prop_python_number(x):
    assert parse_number(repr(x)) == x


def prop_digit_groups(n):
    assert parse_number(f"{n:,}") == n and parse_number(f"-{n:,}") == -n
    assert parse_number(f"{n:,}.5") == n + 0.5
    assert parse_number(f"0,{n % 1000:03d}") is None  # 0,367: 0.367 or 367? a hint, never a mark


def prop_roots_and_powers(k, e):
    assert parse_number(f"√{k * k}") == k and parse_number(f"sqrt({k * k})") == k
    assert parse_number(f"2^{e}") == 2.0 ** e and parse_number(f"2**({e})") == 2.0 ** e


_BANK: list = []


def _bank():
    if not _BANK:
        from tutor.quiz.bank import load_bank

        _BANK.extend(load_bank())
    return _BANK


answers = st.one_of(junk, st.sampled_from(["a", "B", "(c)", "2", "9", "true", "no", "0,367",
                                           "√2", "2^-3", ":hint", "7" * 5000, "x" * 5000]))


def prop_bank_marking(data):
    bank = _bank()
    q = data.draw(st.sampled_from(bank))
    v = check_answer(q, data.draw(answers))
    assert v.valid in (True, False)
    if not v.valid:
        assert v.hint and len(v.hint) < 1000
    else:
        assert v.correct in (True, False, None)


def prop_generated_marking(data):
    from tutor.quiz.generators import FAMILIES, generate

    family = data.draw(st.sampled_from(sorted(FAMILIES)))
    problem = generate(family, data.draw(st.integers(0, 2**31 - 1)))
    part = data.draw(st.sampled_from(problem.parts))
    v = part.check(data.draw(answers))
    assert v.valid in (True, False) and (v.valid or v.hint)


# --------------------------------------------------------------------------- the normal run
# (property, strategies, examples): tests/test_fuzz_slow.py runs the same with more

PROPERTIES = {
    "parse_value": (prop_parse_value, (values,), 150),
    "parse_sets": (prop_parse_sets, (set_items,), 60),
    "input_file": (prop_input_file, (toml_text,), 40),
    "csv": (prop_csv, (st.sampled_from([".csv", ".tsv"]), csv_text), 60),
    "json": (prop_json, (json_text,), 60),
    "bytes": (prop_bytes, (st.binary(max_size=200), st.sampled_from([".npy", ".csv", ".json"])), 40),
    "csv_round_trip": (prop_csv_round_trip, (tables, st.sampled_from([",", ";", "\t"]), st.booleans()), 40),
    "python_number": (prop_python_number, (st.floats(allow_nan=False, allow_infinity=False),), 150),
    "digit_groups": (prop_digit_groups, (st.integers(1000, 10**15),), 80),
    "roots_and_powers": (prop_roots_and_powers, (st.integers(1, 10**6), st.integers(-20, 20)), 80),
    "bank_marking": (prop_bank_marking, (st.data(),), 80),
    "generated_marking": (prop_generated_marking, (st.data(),), 40),
}


def _test(name: str, scale: float = 1.0):
    prop, strategies, n = PROPERTIES[name]
    return fast(max(1, int(n * scale)))(given(*strategies)(prop))


test_parse_value_returns_data_or_one_short_user_error = _test("parse_value")
test_parse_sets_returns_names_or_one_short_user_error = _test("parse_sets")
test_input_files_load_or_give_one_short_user_error = _test("input_file")
test_any_csv_loads_a_valid_matrix_or_one_short_user_error = _test("csv")
test_any_json_loads_a_valid_matrix_or_one_short_user_error = _test("json")
test_any_bytes_load_or_give_one_short_user_error = _test("bytes")
test_a_matrix_written_as_csv_loads_back_exactly = _test("csv_round_trip")
test_a_number_in_python_notation_reads_back = _test("python_number")
test_digit_groups_read_back_and_a_group_after_zero_is_asked = _test("digit_groups")
test_roots_and_powers_read_as_written = _test("roots_and_powers")
test_every_bank_question_marks_any_text_without_raising = _test("bank_marking")
test_every_generated_part_marks_any_text_without_raising = _test("generated_marking")
