"""Parse the student's own inputs: ``--set NAME=VALUE`` and ``--file inputs.toml``.

Values are read as data, never evaluated:

* a number: ``0.5``, ``-1e-3``
* a vector: ``"1, 0, -1"`` or JSON ``[1, 0, -1]``
* a matrix: rows separated by ``;`` — ``"1,0,-1; 0,1,-1"`` — or JSON ``[[1,0,-1],[0,1,-1]]``
* words: ``"my feet hurt"`` or JSON ``["my", "feet", "hurt"]``
* ``true`` / ``false``

The result is a plain Python value (float, list, list of lists, str); the trace's
:class:`engine.trace.InputSpec` then checks its shape and range.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from tutor.errors import UserError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def _number(token: str, where: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise UserError(f"{where}: got {token!r}, expected a number") from None
    if not math.isfinite(value):
        raise UserError(f"{where}: got {token!r}, expected a finite number")
    return value


# minus signs that arrive when numbers are copied from notes, slides or PDFs
_MINUS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})


def parse_value(text: str, where: str = "value") -> Any:
    """One ``--set`` value as a number, list, list of lists, bool or string."""
    text = text.strip()
    if any(ch.isdigit() for ch in text):  # "−0.2" pasted from the notes means -0.2
        text = text.translate(_MINUS)
    if not text:
        raise UserError(f"{where}: empty value; expected a number, a list like '1,0,-1' or a matrix like '1,0; 0,1'")
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if text[0] in "[{\"":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: could not read {text!r} as JSON ({exc.msg} at column {exc.colno})") from None
        _check_json_numbers(value, where)
        return value
    if ";" in text:
        rows = [r for r in (row.strip() for row in text.split(";"))]
        if any(not r for r in rows):
            raise UserError(f"{where}: empty row in {text!r}; expected rows like '1,0; 0,1'")
        return [[_number(t, where) for t in re.split(r"[,\s]+", r.strip()) if t] for r in rows]
    tokens = [t for t in re.split(r"[,\s]+", text) if t]
    try:
        numbers = [float(t) for t in tokens]
    except ValueError:
        if "," in text:  # a list with a non-number in it
            bad = next(t for t in tokens if not _is_float(t))
            if all(not _is_float(t) for t in tokens):
                return [t for t in tokens]
            raise UserError(f"{where}: got {bad!r} in {text!r}, expected numbers separated by commas") from None
        return tokens if len(tokens) > 1 else text
    if any(not math.isfinite(v) for v in numbers):
        raise UserError(f"{where}: got {text!r}, expected finite numbers (no inf or nan)")
    return numbers[0] if len(numbers) == 1 and "," not in text else numbers


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _check_json_numbers(value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise UserError(f"{where}: contains a value that is not a finite number")
    if isinstance(value, list):
        for v in value:
            _check_json_numbers(v, where)
    elif isinstance(value, dict):
        raise UserError(f"{where}: expected a number, list or matrix, got a JSON object")


def parse_sets(items: list[str] | None) -> dict[str, Any]:
    """``["Q=1,0,-1", "K=[0,1,-1]"]`` → ``{"Q": [1.0, 0.0, -1.0], "K": [0, 1, -1]}``."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UserError(f"--set {item!r}: expected NAME=VALUE, for example --set Q='1,0,-1'")
        name, _, raw = item.partition("=")
        name = name.strip()
        if not _NAME.match(name):
            raise UserError(f"--set {item!r}: {name!r} is not an input name")
        out[name] = parse_value(raw, where=f"input {name}")
    return out


def load_input_file(path: str | Path) -> dict[str, Any]:
    """Inputs from a TOML file: top-level ``NAME = value`` pairs (arrays for vectors/matrices)."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"--file {p}: is a folder; expected a TOML file of NAME = value lines")
    if not p.is_file():
        raise UserError(f"--file {p}: no such file; expected a TOML file of NAME = value lines")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"--file {p}: not valid TOML ({str(exc).splitlines()[0]})") from None
    for key, value in data.items():
        if isinstance(value, dict):
            raise UserError(f"--file {p}: [{key}] is a table; expected top-level NAME = value lines")
        if isinstance(value, str):
            data[key] = parse_value(value, where=f"input {key}")
    return data


def gather_inputs(sets: list[str] | None, file: str | Path | None) -> dict[str, Any]:
    """``--file`` first, then each ``--set`` on top of it."""
    values = load_input_file(file) if file else {}
    values.update(parse_sets(sets))
    return values
