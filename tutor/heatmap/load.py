"""Read a weights matrix (and optionally its labels) from a file.

Formats, chosen by the file's extension:

``.csv`` / ``.tsv``
    One matrix row per line, cells separated by commas (tabs for ``.tsv``, or for a ``.csv``
    whose first line has tabs and no commas; semicolons for one whose first line has
    semicolons and no commas, as spreadsheets in many languages write it). Blank lines and
    lines starting with ``#`` are skipped. The first line is a **header** of column labels
    when a non-empty cell after its first is not a number (an empty cell alone does not make
    a header: ``1,,2`` is a row with a gap, which is an error); the first column holds **row
    labels** when every row's first cell is not a number (so a table copied with its labels
    loads as it is)::

        ,I,am,student
        je,0.7,0.2,0.1
        suis,0.1,0.8,0.1

``.npy``
    A 2-D NumPy array of numbers (``np.save``); no pickles.

``.json``
    Either a 2-D list ``[[0.1, 0.9], [0.8, 0.2]]`` or an object
    ``{"weights": [[...]], "rows": ["ai", ...], "cols": ["my", ...], "title": "..."}``
    where only ``weights`` is required.

Label files (``--rows-file``, ``--cols-file``) hold one label per line.

Every problem raises :class:`tutor.errors.UserError` with one line: where, what was wrong and
what was expected. Sizes are checked before the work: the file's size, a ``.npy``'s shape from
its header, nesting and digits before parsing (limits in :mod:`tutor.limits`).
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

from engine.trace import MAX_MAGNITUDE, fmt_num
from tutor.errors import UserError, existing_file
from tutor.limits import (
    MAX_HEATMAP_SIDE,
    MAX_LABEL,
    MAX_LABEL_FILE,
    MAX_MATRIX_FILE,
    MAX_TITLE,
    check_digits,
    check_file_size,
    check_nesting,
    read_text,
    shorten,
)

FORMATS = (".csv", ".tsv", ".npy", ".json")


@dataclass
class Loaded:
    """A matrix from a file, with the labels the file itself carried (``None`` when absent)."""

    weights: np.ndarray  # (R, C) float64
    rows: list[str] | None = None
    cols: list[str] | None = None
    title: str | None = None


def load_matrix(path: str | Path, where: str | None = None) -> Loaded:
    """Read ``path`` by its extension; ``where`` starts every error message (default: the path)."""
    p = Path(path)
    where = where or str(p)
    suffix = p.suffix.lower()
    if suffix not in FORMATS:
        shown = shorten(suffix) if suffix else "'(none)'"
        raise UserError(f"{where}: unknown file type {shown}; expected .csv, .tsv, .npy or .json")
    if p.is_dir():
        raise UserError(f"{where}: is a folder; expected a {suffix} file")
    if not p.is_file():
        raise UserError(f"{where}: no such file")
    if suffix == ".npy":
        check_file_size(p, MAX_MATRIX_FILE, where)
        loaded = _load_npy(p, where)
    else:
        text = read_text(p, where, f"a {suffix} text file", MAX_MATRIX_FILE)
        check_digits(text, where)
        if suffix == ".json":
            check_nesting(text, where)
            loaded = _load_json(text, where)
        else:
            loaded = _load_csv(text, where, suffix)
    check_matrix(loaded.weights, where)
    return loaded


def check_sides(shape: tuple[int, ...], where: str) -> None:
    """``UserError`` when a matrix of ``shape`` has more rows or columns than a heatmap draws."""
    if len(shape) == 2 and max(shape) > MAX_HEATMAP_SIDE:
        raise UserError(f"{where}: a {shape[0]} × {shape[1]} matrix; expected at most "
                        f"{MAX_HEATMAP_SIDE} rows and {MAX_HEATMAP_SIDE} columns")


def check_matrix(weights: np.ndarray, where: str) -> None:
    """2-D, not empty, finite — or one line saying which cell is not."""
    if weights.ndim != 2:
        raise UserError(f"{where}: got a {weights.ndim}-D array of shape {tuple(weights.shape)}; expected a "
                        "2-D matrix (rows, cols)")
    if weights.size == 0:
        raise UserError(f"{where}: the matrix is empty (shape {tuple(weights.shape)}); expected at least one "
                        "row and column")
    check_sides(weights.shape, where)
    bad = np.argwhere(~np.isfinite(weights))
    if len(bad):
        i, j = bad[0]
        raise UserError(f"{where}: row {i + 1}, column {j + 1} is {weights[i, j]}; expected finite numbers")

    big = np.argwhere(np.abs(weights) > MAX_MAGNITUDE)
    if len(big):
        i, j = big[0]
        raise UserError(f"{where}: row {i + 1}, column {j + 1} is {fmt_num(weights[i, j])}; expected "
                        f"numbers between -{fmt_num(MAX_MAGNITUDE)} and {fmt_num(MAX_MAGNITUDE)} "
                        "(attention weights, or scores)")


# minus signs that arrive when a table is copied from notes, slides or PDFs ("−0.2")
_MINUS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})


def _number(cell: str) -> float | None:
    try:
        return float(cell.translate(_MINUS))
    except ValueError:
        return None


def _load_csv(text: str, where: str, suffix: str) -> Loaded:
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise UserError(f"{where}: no rows; expected lines of numbers separated by commas")
    if len(lines) > MAX_HEATMAP_SIDE + 1:  # a header line and the rows
        raise UserError(f"{where}: {len(lines)} lines; expected at most {MAX_HEATMAP_SIDE} rows "
                        "(and a header line)")
    delimiter = _delimiter(lines, where, suffix)
    records = [(n, [c.strip() for c in next(csv.reader([line], delimiter=delimiter))]) for n, line in lines]

    header: list[str] | None = None
    n0, cells0 = records[0]
    tail = cells0[1:] if len(cells0) > 1 else cells0
    if any(c and _number(c) is None for c in tail):
        header, records = cells0, records[1:]
        if not records:
            raise UserError(f"{where}: only a header line; expected rows of numbers under it")
    labelled = all(_number(cells[0]) is None for _, cells in records)
    rows = [cells[0] for _, cells in records] if labelled else None
    matrix: list[list[float]] = []
    width, width_line = None, 0
    for n, cells in records:
        numbers = cells[1:] if labelled else cells
        if width is None:
            width, width_line = len(numbers), n
        elif len(numbers) != width:
            raise UserError(
                f"{where}: line {n} has {_values(len(numbers))}; expected {width} like line {width_line} "
                "(every row needs the same number of columns)"
            )
        row = []
        for k, cell in enumerate(numbers, 2 if labelled else 1):
            value = _number(cell)
            if not cell:
                raise UserError(f"{where}: line {n}, column {k} is empty; expected a number")
            if value is None:
                raise UserError(f"{where}: line {n}, column {k}: {shorten(cell)} is not a number")
            if not math.isfinite(value):
                raise UserError(f"{where}: line {n}, column {k} is {cell[:40]}; expected finite numbers")
            row.append(value)
        matrix.append(row)
    assert width is not None  # records is not empty: its first row set it
    if width == 0:  # every row is a label alone: no numbers to draw
        raise UserError(f"{where}: line {width_line} has a label and no numbers; expected numbers after it, "
                        "separated by commas")
    cols = None
    if header is not None:
        names = header[1:] if len(header) == width + 1 else header
        if len(names) != width:
            raise UserError(f"{where}: the header line {n0} has {len(header)} names; expected {width} (one "
                            "per column)")
        cols = names
    return Loaded(np.array(matrix, dtype=np.float64), rows, cols)


_NUMBER_SEMI_NUMBER = re.compile(r"\d\s*;\s*[-+]?\.?\d")
_DECIMAL_COMMA = re.compile(r"\d,\d")


def _delimiter(lines: list[tuple[int, str]], where: str, suffix: str) -> str:
    """Tab, semicolon or comma, from the first line; decimal commas with ';' between cells are
    refused with what to type instead (they cannot be read unambiguously)."""
    first = lines[0][1]
    if suffix == ".tsv" or ("\t" in first and "," not in first):
        return "\t"
    if ";" in first and "," not in first:
        return ";"
    semi = next(((n, line) for n, line in lines
                 if _NUMBER_SEMI_NUMBER.search(line) and _DECIMAL_COMMA.search(line)), None)
    if semi is not None:  # 0,7;0,3 (a ';' inside a label, as in "a;b", is only a character)
        raise UserError(f"{where}: line {semi[0]} mixes ';' and ','; expected cells separated by "
                        "commas with '.' as the decimal point (0.5,0.3), or by ';' alone (0.5;0.3)")
    return ","


def read_npy_header(fh, where: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype a ``.npy`` stream declares, read from its header before its data."""
    try:
        version = npy.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = npy.read_array_header_2_0(fh)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]} is not supported")
    except (ValueError, OSError, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{where}: not a readable .npy array ({shorten(reason, 80)[1:-1]})") from None
    return tuple(int(n) for n in shape), dtype


def _load_npy(path: Path, where: str) -> Loaded:
    with open(path, "rb") as fh:
        shape, dtype = read_npy_header(fh, where)
    if len(shape) == 2:
        check_sides(shape, where)
    elif int(np.prod(shape, dtype=np.float64)) > MAX_HEATMAP_SIDE:
        raise UserError(f"{where}: got a {len(shape)}-D array of shape {shape}; expected a 2-D "
                        f"matrix of at most {MAX_HEATMAP_SIDE} × {MAX_HEATMAP_SIDE}")
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{where}: not a readable .npy array ({reason})") from None
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
        kind = getattr(arr, "dtype", type(arr).__name__)
        raise UserError(f"{where}: holds {kind} values; expected a 2-D array of numbers")
    return Loaded(arr.astype(np.float64))


def _load_json(text: str, where: str) -> Loaded:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{where}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    rows = cols = title = None
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"weights", "rows", "cols", "title"})
        if unknown:
            raise UserError(
                f"{where}: unknown key {shorten(unknown[0])}; expected weights, rows, cols, title"
            )
        if "weights" not in data:
            raise UserError(f"{where}: no \"weights\" key; expected {{\"weights\": [[...]], \"rows\": [...], "
                            "\"cols\": [...]}")
        rows = _json_labels(data.get("rows"), "rows", where)
        cols = _json_labels(data.get("cols"), "cols", where)
        title = data.get("title")
        if title is not None and not isinstance(title, str):
            raise UserError(f"{where}: \"title\" is {type(title).__name__}; expected a string")
        if title is not None and len(title) > MAX_TITLE:
            raise UserError(f"{where}: \"title\" has {len(title)} characters; expected at most {MAX_TITLE}")
        data = data["weights"]
    return Loaded(_json_matrix(data, where), rows, cols, title)


def _json_labels(value: object, key: str, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
    ):
        raise UserError(f"{where}: \"{key}\" must be a list of strings, like [\"my\", \"feet\", \"hurt\"]")
    return [str(v) for v in value]


def _json_matrix(data: object, where: str) -> np.ndarray:
    example = "[[0.1, 0.9], [0.8, 0.2]]"
    if not isinstance(data, list) or not data:
        raise UserError(f"{where}: weights is {_json_kind(data)}; expected a 2-D list of numbers like "
                        f"{example}")
    if len(data) > MAX_HEATMAP_SIDE or any(isinstance(r, list) and len(r) > MAX_HEATMAP_SIDE for r in data):
        longest = max(len(r) if isinstance(r, list) else 0 for r in data)
        check_sides((len(data), longest), where)
    if not all(isinstance(row, list) for row in data):
        if all(_is_num(v) for v in data):
            raise UserError(f"{where}: weights is a 1-D list of {len(data)} numbers; expected a 2-D list of "
                            f"rows like {example}")
        raise UserError(f"{where}: weights mixes rows and single values; expected a 2-D list of numbers like "
                        f"{example}")
    width = len(data[0])
    for i, row in enumerate(data, 1):
        if len(row) != width:
            raise UserError(f"{where}: row {i} has {_values(len(row))}; expected {width} like row 1 (every "
                            "row the same length)")
        for j, value in enumerate(row, 1):
            if not _is_num(value):
                raise UserError(f"{where}: row {i}, column {j} is {shorten(json.dumps(value))}; expected a "
                                "number")
    return np.array(data, dtype=np.float64)


def _values(n: int) -> str:
    return f"{n} value{'' if n == 1 else 's'}"


def _is_num(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an empty list"
    return {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def split_labels(text: str) -> list[str]:
    """``"j' ai mal au pieds"`` → ``["j'", "ai", "mal", "au", "pieds"]`` (split on whitespace)."""
    return text.split()


def load_labels(path: str | Path, where: str) -> list[str]:
    """One label per line; trailing blank lines are ignored."""
    p = existing_file(path, where, "a text file with one label per line")
    lines = read_text(p, where, "one label per line", MAX_LABEL_FILE).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise UserError(f"{where}: the file is empty; expected one label per line")
    return [line.strip() for line in lines]


def check_labels(labels: list[str], n: int, where: str, axis: str) -> list[str]:
    """``labels`` when there are ``n`` of them; otherwise one line saying how many are needed."""
    if len(labels) != n:
        raise UserError(f"{where}: {len(labels)} labels for {n} {axis}; expected {n}, one per {axis[:-1]}")
    long = next((label for label in labels if len(label) > MAX_LABEL), None)
    if long is not None:
        raise UserError(f"{where}: the label {shorten(long)} is longer than {MAX_LABEL} "
                        f"characters; expected labels of at most {MAX_LABEL}")
    return labels
