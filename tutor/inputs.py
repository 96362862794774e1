"""The ``--set NAME=VALUE`` syntax both ways, and ``--file inputs.toml``.

:func:`parse_value` reads one value; :func:`format_value` writes one so that ``parse_value``
reads it back (``parse_value(format_value(v)) == v``: a property test holds it). Everything
that shows a value for the student to paste or edit (``trace --inputs``, the TUI's input
form, a generated problem's trace command) writes it with :func:`format_value`;
:func:`trace_command` and :func:`trace_target` do the same for a whole
``attn-tutor trace NAME --set …`` line.

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
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.errors import UserError, existing_file
from tutor.limits import MAX_INPUT_FILE, check_text, read_text, shorten
from tutor.render.safe import shown_path

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def _number(token: str, where: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise UserError(f"{where}: got {shorten(token)}, expected a number") from None
    if not math.isfinite(value):
        raise UserError(f"{where}: got {shorten(token)}, expected a finite number")
    return value


# minus signs that arrive when numbers are copied from notes, slides or PDFs
_MINUS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})


def parse_value(text: str, where: str = "value") -> Any:
    """One ``--set`` value as a number, list, list of lists, bool or string.

    Raises:
        UserError: one line, echoing at most a short prefix of ``text``; also when ``text``
            is longer, nests deeper or holds a longer number than :mod:`tutor.limits` allows.
    """
    check_text(text, where)
    text = text.strip()
    if any(ch.isdigit() for ch in text):  # "−0.2" pasted from the notes means -0.2
        text = text.translate(_MINUS)
    if not text:
        raise UserError(f"{where}: empty value; expected a number, a list like '1,0,-1' or a matrix like "
                        "'1,0; 0,1'")
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if text[0] in "[{\"":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: could not read {shorten(text)} as JSON ({exc.msg} at column "
                            f"{exc.colno})") from None
        _check_json_numbers(value, where)
        return value
    if ";" in text:
        rows = [r for r in (row.strip() for row in text.split(";"))]
        if any(not r for r in rows):
            raise UserError(f"{where}: empty row in {shorten(text)}; expected rows like '1,0; 0,1'")
        return [[_number(t, where) for t in re.split(r"[,\s]+", r.strip()) if t] for r in rows]
    tokens = [t for t in re.split(r"[,\s]+", text) if t]
    try:
        numbers = [float(t) for t in tokens]
    except ValueError:
        if "," in text:  # a list with a non-number in it
            bad = next(t for t in tokens if not _is_float(t))
            if all(not _is_float(t) for t in tokens):
                return [t for t in tokens]
            raise UserError(f"{where}: got {shorten(bad)} in {shorten(text)}, expected numbers "
                            "separated by commas") from None
        return tokens if len(tokens) > 1 else text
    if any(not math.isfinite(v) for v in numbers):
        raise UserError(f"{where}: got {shorten(text)}, expected finite numbers (no inf or nan)")
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
            raise UserError(f"--set {shorten(item)}: expected NAME=VALUE, for example --set Q='1,0,-1'")
        name, _, raw = item.partition("=")
        name = name.strip()
        if not _NAME.match(name) or len(name) > 40:
            raise UserError(f"--set {shorten(item)}: {shorten(name)} is not an input name")
        out[name] = parse_value(raw, where=f"input {name}")
    return out


def load_input_file(path: str | Path) -> dict[str, Any]:
    """Inputs from a TOML file: top-level ``NAME = value`` pairs (arrays for vectors/matrices)."""
    where = f"--file {shown_path(path)}"
    p = existing_file(path, where, "a TOML file of NAME = value lines")
    text = read_text(p, where, "a TOML file of NAME = value lines", MAX_INPUT_FILE, "utf-8")
    check_text(text, where, limit=MAX_INPUT_FILE, toml=True)
    import tomllib  # deferred: only --file reads TOML (start-up budget: `trace qkv --json` ≤ 0.3 s)

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise UserError(f"{where}: not valid TOML ({str(exc).splitlines()[0]})") from None
    for key, value in data.items():
        if isinstance(value, dict):
            raise UserError(f"{where}: [{key[:40]}] is a table; expected top-level NAME = value lines")
        if isinstance(value, str):
            data[key] = parse_value(value, where=f"input {key}")
    return data


def gather_inputs(sets: list[str] | None, file: str | Path | None) -> dict[str, Any]:
    """``--file`` first, then each ``--set`` on top of it."""
    values = load_input_file(file) if file else {}
    values.update(parse_sets(sets))
    return values


# --------------------------------------------------------------------------- writing values


def format_value(value: Any, digits: int | None = None) -> str:
    """``value`` in the ``--set`` syntax: ``0.5``, ``1, 0, -1``, ``1, 0; 0, 1``, ``my feet hurt``.

    Args:
        value: a number, bool, string, list of words, or a (nested) list / array of numbers.
        digits: ``None`` writes every number exactly (the shortest text that reads back to
            the same float); an int rounds to that many decimals for display, as
            :func:`engine.trace.fmt_num` does (``0.707107``).

    A form that would read back as something else is written as JSON instead: one-element
    lists (``[1]``; ``1`` alone is a scalar), a one-row matrix (``[[0.6, 0.3]]``), a word
    that looks like a number or contains spaces (``["1"]``, ``"my feet"``).
    """
    import numpy as np  # deferred: loads numpy (start-up time)

    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return _plain_or_json(value, value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return _plain_or_json(" ".join(value), list(value))
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or arr.ndim > 2:
        return _json_text(_jsonable(value), value)
    if arr.ndim == 0:
        return _num(arr.item(), digits)
    if arr.ndim == 1 and arr.size > 1:
        return ", ".join(_num(v, digits) for v in arr.tolist())
    if arr.ndim == 2 and arr.shape[0] > 1 and arr.shape[1] > 0:
        return "; ".join(", ".join(_num(v, digits) for v in row) for row in arr.tolist())
    # [x], [], [[a, b]] and [[]] would read back as something else: JSON
    nested = arr.tolist()
    def inner(r: list) -> str:
        return "[" + ", ".join(_num(v, digits) for v in r) + "]"

    return inner(nested) if arr.ndim == 1 else "[" + ", ".join(inner(r) for r in nested) + "]"


def _num(x: float | int, digits: int | None) -> str:
    if digits is not None:
        from engine.trace import fmt_num  # deferred: loads numpy (start-up time)

        return fmt_num(x, digits)
    if isinstance(x, int):
        return str(x)
    text = repr(float(x))  # the shortest text that reads back to this float
    return text[:-2] if text.endswith(".0") else text


def _plain_or_json(text: str, value: Any) -> str:
    """``text`` when :func:`parse_value` reads it back to ``value``, JSON otherwise."""
    try:
        if parse_value(text) == value and text == text.strip():
            return text
    except UserError:
        pass
    return _json_text(value, value)


def _json_text(data: Any, value: Any) -> str:
    text = json.dumps(data, ensure_ascii=False)
    try:
        if parse_value(text) == value:
            return text
    except UserError:
        pass
    return json.dumps(data)  # \u escapes: a pasted minus sign inside a word stays a word


def _jsonable(value: Any) -> Any:
    import numpy as np  # deferred: loads numpy (start-up time)

    return np.asarray(value).tolist() if isinstance(value, np.ndarray) else value


# --------------------------------------------------------------------------- whole commands


def trace_command(name: str, inputs: Mapping[str, Any] | None = None) -> str:
    """``attn-tutor trace NAME --set A=… …``: the shell line that rebuilds a trace on ``inputs``."""
    args = ["attn-tutor", "trace", name]
    for key, value in (inputs or {}).items():
        args += ["--set", f"{key}={format_value(value)}"]
    return " ".join(shlex.quote(a) for a in args)


def trace_target(command: str | None) -> tuple[str, dict[str, Any]] | None:
    """The inverse of :func:`trace_command`: ``(NAME, overrides)``, or None for another line."""
    if not command:
        return None
    words = shlex.split(command)
    if words[:2] != ["attn-tutor", "trace"] or len(words) < 3:
        return None
    sets = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--set"]
    return words[2], parse_sets(sets)


@dataclass(frozen=True)
class TraceLink:
    """A trace and the inputs that replay some numbers on it, as data (not a command string)."""

    name: str
    inputs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def command(self) -> str:
        """The same, as the command a student can paste into a shell."""
        return trace_command(self.name, self.inputs)

    @property
    def practice_command(self) -> str:
        """The command that practises this trace: the student does its steps."""
        return trace_command(self.name) + " --practice"
