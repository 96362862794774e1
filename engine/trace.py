"""The Trace model: one worked computation, step by step.

A :class:`Trace` is what ``attn-tutor trace NAME`` shows. Builders in ``engine.traces`` make
one from inputs (the notes' numbers by default, or the student's own). Every step holds the
formula (Unicode math), the same formula with the numbers put in, the named values it
produced and a short note. The final results are computed twice — ``result`` from the steps
and ``fused`` from the one-call engine function — and the test suite asserts they agree.

Renderers (Rich, plain text, JSON, Markdown, the TUI) live in ``tutor/``; this module only
holds data and the number formatting every renderer shares.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from engine._validate import shape_str
from engine.format import number as fmt_num
from engine.format import value as fmt

Kind = Literal["scalar", "int", "vector", "matrix", "labels", "word", "choice", "bool"]


# --------------------------------------------------------------------------- formatting

# ``fmt_num`` (one number) and ``fmt`` (a scalar, vector ``[a, b]`` or matrix ``[a, b; c, d]``
# on one line) are :func:`engine.format.number` and :func:`engine.format.value`, imported above
# under the names the trace builders use.


def to_jsonable(value: Any) -> Any:
    """Arrays → nested lists; ±inf and NaN → the strings "inf", "-inf", "nan" (JSON has none)."""
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    return value


# --------------------------------------------------------------------------- inputs

MAX_MAGNITUDE = 1e6
"""Largest size a number in a scalar, vector or matrix input may have (unless the input's own
bounds say otherwise). The traces are worked by hand; products and exponentials of bigger
numbers overflow float64 or cancel to noise, and the student would see nan, not a lesson."""

MAX_SIDE = 64
"""Most numbers along any side of a vector or matrix input, and most words in a list of words:
a worked example is read step by step, and every step prints every value."""

MAX_WORD = 40
"""Longest word (token, label) an input may hold, in characters."""

_MAX_TEXT = f"1e{round(math.log10(MAX_MAGNITUDE))}"


def short(value: Any, limit: int = 40) -> str:
    """``repr(value)``, cut to a short prefix with its length: error lines never echo 100 KB."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(text) if isinstance(value, str) else text
    return f"{text[:limit] + '…'!r} ({len(text)} characters)"
_MAX_WHOLE = 1e15


@dataclass(frozen=True)
class InputSpec:
    """One input a trace accepts (and ``--set NAME=VALUE`` may override).

    ``shape`` uses ints for fixed sizes and strings for sizes tied to other inputs (``"n"``,
    ``"d_k"``): fixed sizes are checked here, and a symbol must have the same size in every
    input that uses it (checked by :func:`coerce_inputs`).
    """

    name: str
    kind: Kind
    default: Any
    description: str
    shape: tuple[int | str, ...] | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False
    """``None`` is allowed (and is then the default): the builder derives the value itself."""

    def expected(self) -> str:
        """What a valid value looks like, for error messages and help."""
        if self.kind == "scalar":
            rng = ""
            if self.low is not None or self.high is not None:
                lb = "(" if self.low_open else "["
                hb = ")" if self.high_open else "]"
                lo = "-inf" if self.low is None else fmt_num(self.low)
                hi = "inf" if self.high is None else fmt_num(self.high)
                rng = f" in {lb}{lo}, {hi}{hb}"
            return f"a number{rng}"
        if self.kind == "int":
            if self.low is not None and self.high is not None:
                return f"a whole number from {int(self.low)} to {int(self.high)}"
            lo = "" if self.low is None else f" >= {int(self.low)}"
            hi = "" if self.high is None else f" <= {int(self.high)}"
            return f"a whole number{lo}{hi}"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "word":
            return "one word"
        if self.kind == "labels":
            n = f" ({self.shape[0]} of them)" if self.shape and isinstance(self.shape[0], int) else ""
            return f"a list of words{n}"
        dims = shape_str(self.shape) if self.shape else ("(n,)" if self.kind == "vector" else "(rows, cols)")
        return f"a {self.kind} of shape {dims}"

    def coerce(self, value: Any) -> Any:
        """Check and normalise one value; ``ValueError("input NAME: ...")`` when it is wrong."""
        where = f"input {self.name}"
        if value is None and self.optional:
            return None
        if self.kind in ("scalar", "int"):
            if isinstance(value, (list, tuple, np.ndarray)) and np.size(value) == 1:
                value = np.asarray(value).ravel()[0]
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                shown = fmt_num(value) if isinstance(value, (bool, np.bool_)) else short(value)
                raise ValueError(f"{where}: got {shown}, expected {self.expected()}")
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(f"{where}: got {v}, expected {self.expected()}")
            shown = fmt_num(v)  # as a float: 1e300 prints as 1.000e+300, not 300 digits
            if self.kind == "int" and v != int(v):
                raise ValueError(f"{where}: got {shown}, expected {self.expected()}")
            lo_bad = self.low is not None and (v <= self.low if self.low_open else v < self.low)
            hi_bad = self.high is not None and (v >= self.high if self.high_open else v > self.high)
            if lo_bad or hi_bad:
                raise ValueError(f"{where}: got {shown}, expected {self.expected()}")
            if self.kind == "scalar":
                self._check_magnitude(abs(v), shown, "got", "numbers")
                return v
            if abs(v) > _MAX_WHOLE:  # floats are whole numbers only up to 2^53; seeds are smaller
                raise ValueError(f"{where}: got {shown}, expected {self.expected()} and below 1e15")
            return int(v)
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise ValueError(f"{where}: got {short(value)}, expected true or false")
        if self.kind == "word":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = fmt_num(value)
            if isinstance(value, str) and value.strip() and len(value.split()) == 1:
                self._check_word(value.strip())
                return value.strip()
            raise ValueError(f"{where}: got {short(value)}, expected {self.expected()}")
        if self.kind == "choice":
            if isinstance(value, str) and value in self.choices:
                return value
            raise ValueError(f"{where}: got {short(value)}, expected {self.expected()}")
        if self.kind == "labels":
            if isinstance(value, str):
                value = value.split()
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, (str, int, float)) for v in value
            ):
                raise ValueError(f"{where}: got {short(value)}, expected {self.expected()}")
            if len(value) > MAX_SIDE:
                raise ValueError(f"{where}: got {len(value)} words, expected at most {MAX_SIDE} "
                                 "(a worked example prints every step for every word)")
            # `--set tokens='1947 2024'` parses as numbers: show them as typed, not as 1947.0
            labels = [v if isinstance(v, str) else fmt_num(v) for v in value]
            for label in labels:
                self._check_word(label)
            if self.shape and isinstance(self.shape[0], int) and len(labels) != self.shape[0]:
                raise ValueError(f"{where}: got {len(labels)} words, expected {self.expected()}")
            if not labels:
                raise ValueError(f"{where}: got no words, expected {self.expected()}")
            return labels
        # vector / matrix
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError):
            if (isinstance(value, (list, tuple)) and all(isinstance(r, (list, tuple)) for r in value)
                    and len({len(r) for r in value}) > 1):
                lengths = ", ".join(str(len(r)) for r in value[:8]) + (", …" if len(value) > 8 else "")
                raise ValueError(f"{where}: got rows of different lengths ({lengths}), expected "
                                 f"{self.expected()} with every row the same length") from None
            raise ValueError(f"{where}: got {short(value)}, expected {self.expected()} of numbers") from None
        want = 1 if self.kind == "vector" else 2
        if arr.ndim and max(arr.shape) > MAX_SIDE:
            raise ValueError(f"{where}: got shape {shape_str(arr.shape)}, expected at most "
                             f"{MAX_SIDE} numbers along each side (small enough to follow by hand)")
        if want == 1 and arr.ndim == 0 and not isinstance(value, (bool, np.bool_)):
            arr = arr.reshape(1)  # `--set temperatures=0.5`: one number is a vector of one
        if arr.ndim != want or arr.size == 0:
            raise ValueError(
                f"{where}: got {_what(value, arr)}, expected {self.expected()}"
                + ("; separate the rows with ';'" if want == 2 and arr.ndim == 1 and arr.size else "")
            )
        if self.shape:
            for axis, dim in enumerate(self.shape):
                if isinstance(dim, int) and arr.shape[axis] != dim:
                    raise ValueError(f"{where}: got shape {shape_str(arr.shape)}, expected {self.expected()}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{where}: contains NaN or inf, expected finite numbers")
        if self.low is not None and arr.min() < self.low:
            raise ValueError(f"{where}: has {fmt_num(arr.min())}, expected values >= {fmt_num(self.low)}")
        if self.high is not None and arr.max() > self.high:
            raise ValueError(f"{where}: has {fmt_num(arr.max())}, expected values <= {fmt_num(self.high)}")
        biggest = arr.flat[int(np.argmax(np.abs(arr)))]
        self._check_magnitude(abs(float(biggest)), fmt_num(biggest), "has", "values")
        return arr

    def _check_word(self, word: str) -> None:
        if len(word) > MAX_WORD:
            raise ValueError(f"input {self.name}: the word {short(word)} is longer than "
                             f"{MAX_WORD} characters; expected words of at most {MAX_WORD}")

    def _check_magnitude(self, size: float, shown: str, verb: str, what: str) -> None:
        """Refuse numbers beyond ``MAX_MAGNITUDE`` unless this input's own bounds allow them."""
        bounded = (self.low is not None and self.high is not None
                   and max(abs(self.low), abs(self.high)) >= size)
        if size > MAX_MAGNITUDE and not bounded:
            raise ValueError(f"input {self.name}: {verb} {shown}, expected {what} between "
                             f"-{_MAX_TEXT} and {_MAX_TEXT}, small enough to follow by hand")


def coerce_inputs(specs: Sequence[InputSpec], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Defaults overlaid with ``overrides``, each checked; symbolic sizes must agree.

    Raises:
        ValueError: one line naming the input, what was given and what was expected.
    """
    by_name = {s.name: s for s in specs}
    overrides = dict(overrides or {})
    unknown = [k for k in overrides if k not in by_name]
    if unknown:
        raise ValueError(
            f"input {unknown[0]}: no such input; this trace takes " + ", ".join(by_name)
        )
    values = {s.name: s.coerce(overrides.get(s.name, s.default)) for s in specs}
    sizes: dict[str, tuple[int, str]] = {}
    # inputs left at their defaults fix the sizes first, so a clash names the input you changed
    for s in sorted(specs, key=lambda s: s.name in overrides):
        if values[s.name] is None or not s.shape or s.kind not in ("vector", "matrix", "labels"):
            continue
        shape = (len(values[s.name]),) if s.kind == "labels" else np.shape(values[s.name])
        for axis, dim in enumerate(s.shape):
            if not isinstance(dim, str):
                continue
            got = shape[axis]
            if dim in sizes and sizes[dim][0] != got:
                first_n, first = sizes[dim]
                raise ValueError(
                    f"input {s.name}: has {dim} = {got} (shape {shape_str(shape)}), but {first} "
                    f"has {dim} = {first_n}; expected shape {shape_str(s.shape)} with the same {dim}"
                )
            sizes.setdefault(dim, (got, s.name))
    return values


def _what(value: Any, arr: np.ndarray) -> str:
    """What a student gave, in words: ``true``, ``a single number (3)``, ``a vector of 4 numbers``."""
    if isinstance(value, (bool, np.bool_)):
        return fmt_num(value)
    if arr.size == 0:
        return "nothing (an empty list)"
    if arr.ndim == 0:
        return f"a single number ({fmt_num(arr.item())})"
    if arr.ndim == 1:
        return f"a vector of {arr.size} number{'s' if arr.size != 1 else ''}"
    return f"shape {shape_str(arr.shape)}"


# --------------------------------------------------------------------------- the trace

@dataclass
class Step:
    """One step: formula, formula with numbers, the values it produced, and why."""

    title: str
    formula: str
    substitution: str
    values: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass
class Erratum:
    """Something the notes print that the engine computes (or counts) differently.

    ``kind`` sorts them for the reader: ``arithmetic`` (a wrong result), ``miscount`` (a length
    or index), ``inconsistency`` (two places in the notes disagree), ``wording`` (a term that
    does not match the numbers), ``claim`` (a statement of fact that is wrong). A last digit
    that moved only because the notes rounded an intermediate they state is not an erratum:
    traces say so in a step note instead.

    ``id`` is the erratum's stable name in the tutor's catalogue (``lessons/errata.toml``),
    which lessons, quiz items and exam cards refer to.
    """

    where: str
    printed: str
    computed: str
    why: str
    kind: str = "arithmetic"
    id: str = ""


@dataclass
class HeatmapData:
    """A matrix worth drawing as a heatmap: rows are queries/outputs, columns keys/inputs."""

    title: str
    weights: np.ndarray
    row_labels: list[str]
    col_labels: list[str]
    kind: Literal["weights", "scores"] = "weights"


@dataclass
class Trace:
    """A worked computation; see the module docstring."""

    name: str
    title: str
    section: int
    inputs: dict[str, Any]
    steps: list[Step]
    result: dict[str, Any]
    fused: dict[str, Any] = field(default_factory=dict)
    errata: list[Erratum] = field(default_factory=list)
    source: str = "notes"
    heatmaps: list[HeatmapData] = field(default_factory=list)
    summary: str = ""
    """One or two sentences: what the example computes and where its numbers come from."""
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Per-result ``(rtol, atol)`` where ``fused`` is itself approximate (finite differences,
    Monte Carlo on other samples); everything else must agree to rounding."""

    def disagreements(self, rtol: float = 1e-9, atol: float = 1e-12) -> list[str]:
        """Names in ``fused`` whose value differs from the step-by-step ``result``."""
        bad = []
        for key, fused in self.fused.items():
            key_rtol, key_atol = self.tolerances.get(key, (rtol, atol))
            if key not in self.result:
                bad.append(f"{key}: missing from result")
                continue
            a, b = self.result[key], fused
            if isinstance(a, (str, list)) and np.asarray(a).dtype.kind not in "fiub":
                if a != b:
                    bad.append(f"{key}: {a!r} != {b!r}")
            elif np.shape(a) != np.shape(b) or not np.allclose(
                    np.asarray(a, float), np.asarray(b, float), rtol=key_rtol, atol=key_atol,
                    equal_nan=True):
                bad.append(f"{key}: {fmt(a)} != {fmt(b)}")
        return bad

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON schema (see tutor/schemas/trace-json.md)."""
        return {
            "schema": 1,
            "name": self.name,
            "title": self.title,
            "section": self.section,
            "source": self.source,
            "summary": self.summary,
            "inputs": to_jsonable(self.inputs),
            "steps": [
                {
                    "index": i + 1,
                    "title": s.title,
                    "formula": s.formula,
                    "substitution": s.substitution,
                    "values": to_jsonable(s.values),
                    "note": s.note,
                }
                for i, s in enumerate(self.steps)
            ],
            "result": to_jsonable(self.result),
            "fused": to_jsonable(self.fused),
            "agrees": not self.disagreements(),
            "errata": [
                {"id": e.id, "where": e.where, "printed": e.printed, "computed": e.computed,
                 "why": e.why, "kind": e.kind}
                for e in self.errata
            ],
            "heatmaps": [
                {
                    "title": h.title,
                    "kind": h.kind,
                    "rows": list(h.row_labels),
                    "cols": list(h.col_labels),
                    "weights": to_jsonable(h.weights),
                }
                for h in self.heatmaps
            ],
        }


def same_as_defaults(specs: Sequence[InputSpec], inputs: Mapping[str, Any], *names: str) -> bool:
    """True when the named inputs (all of them if none named) still hold the notes' defaults.

    Errata describe the notes' own numbers, so a builder attaches them only while this holds:
    a student who changes an input gets their numbers, not a correction of someone else's.
    """
    wanted = set(names) if names else {s.name for s in specs}
    for spec in specs:
        if spec.name not in wanted:
            continue
        default = None if spec.default is None else spec.coerce(spec.default)
        value = inputs[spec.name]
        if default is None or value is None:
            if (default is None) != (value is None):  # an optional input set, or one cleared
                return False
        elif isinstance(default, np.ndarray):
            if np.shape(value) != default.shape or not np.array_equal(value, default):
                return False
        elif value != default:
            return False
    return True


def source_of(specs: Sequence[InputSpec], inputs: Mapping[str, Any], base: str) -> str:
    """``base`` ("notes", "notes+built" or "built") while every input is a default, else "user"."""
    return base if same_as_defaults(specs, inputs) else "user"


Builder = Callable[..., Trace]
