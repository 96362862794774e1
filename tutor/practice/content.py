"""What each trace asks for in practice: ``lessons/practice/<trace>.toml``, loaded and checked.

One file per trace::

    trace = "qkv"

    [[step]]
    step = 6                      # the trace's step (1 = first), in increasing order
    ask = ["weights"]             # values of that step the student computes; "A[3]" is row 3
                                  # of matrix A (entry 3 of a vector): a row, not 25 numbers
    given = []                    # values of that step shown even while it is blank (data the
                                  # step hands the student, such as a table of probabilities)
    needs = ["scores"]            # hint 2: the intermediates it needs (this step's values,
                                  # an earlier step's, or an input)

    [step.why]                    # the self-explanation prompt after the step
    prompt = "Why ...?"
    choices = ["...", "...", "..."]   # 3 or 4 principles
    answer = 2                    # the right one, 1 = first
    reason = "..."                # shown after the choice, right or wrong

Only the steps listed are practised; the others are always shown. Fading blanks the listed
steps from the last one back (:mod:`tutor.practice.levels`). Pure Python: loading needs no
engine; :func:`check_against` holds a plan against a built trace.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tutor.content_schema import (
    _INT,
    _STR,
    _STRS,
    _TABLES,
    ContentError,
    _check_fields,
    _read_toml,
    _rel,
    _root,
)

FOLDER = "practice"
"""``lessons/practice/``."""

_PART = re.compile(r"(?P<name>[^\[\]]+)\[(?P<index>[1-9]\d*)\]")


@dataclass(frozen=True)
class Ask:
    """One value the student computes: a named value of the step, or one row/entry of it."""

    name: str
    index: int | None = None
    """1-based row of a matrix (entry of a vector); None for the whole value."""

    @classmethod
    def parse(cls, text: str) -> Ask:
        m = _PART.fullmatch(text.strip())
        if m:
            return cls(m["name"].strip(), int(m["index"]))
        return cls(text.strip())

    @property
    def label(self) -> str:
        """``weights``, ``A[3]``: how stored rows and messages name it."""
        return self.name if self.index is None else f"{self.name}[{self.index}]"

    def pick(self, value: Any) -> Any:
        """This ask's part of the whole ``value``."""
        if self.index is None:
            return value
        return value[self.index - 1]


@dataclass(frozen=True)
class Why:
    """A self-explanation prompt: why is this step what it is?"""

    prompt: str
    choices: tuple[str, ...]
    answer: int
    """0-based index of the right choice."""
    reason: str


@dataclass(frozen=True)
class StepPlan:
    step: int
    """1-based step of the trace."""
    asks: tuple[Ask, ...]
    given: tuple[str, ...]
    needs: tuple[str, ...]
    why: Why

    @property
    def index(self) -> int:
        """0-based step of the trace."""
        return self.step - 1


@dataclass(frozen=True)
class PracticePlan:
    trace: str
    steps: tuple[StepPlan, ...]

    @property
    def top(self) -> int:
        """The top fading level: every listed step blank."""
        return len(self.steps)


_FILE = {"trace": (_STR, True), "step": (_TABLES, True)}
_STEP = {"step": (_INT, True), "ask": (_STRS, True), "given": (_STRS, False),
         "needs": (_STRS, False), "why": ("a table", True)}
_WHY = {"prompt": (_STR, True), "choices": (_STRS, True), "answer": (_INT, True),
        "reason": (_STR, True)}


def _table(value: Any) -> bool:
    return isinstance(value, dict)


def practice_path(trace: str, root: Path | None = None) -> Path:
    return _root(root) / FOLDER / f"{trace}.toml"


def load_plan(trace: str, root: Path | None = None) -> PracticePlan:
    """The practice plan of ``trace``.

    Raises:
        ContentError: the file is missing or breaks the schema (one line naming the field).
    """
    return _load(trace, None if root is None else Path(root))


@functools.lru_cache(maxsize=64)
def _load(trace: str, root: Path | None) -> PracticePlan:
    base = _root(root)
    path = practice_path(trace, base)
    where = _rel(path, base)
    data = _read_toml(path, where)
    if not isinstance(data.get("why", {}), dict):
        raise ContentError(f"{where}: 'why' belongs inside a [[step]]")
    _check_fields(data, _FILE, where)
    if data["trace"] != trace:
        raise ContentError(f"{where}: field 'trace' is {data['trace']!r}; expected {trace!r} "
                           "(the file's name)")
    if not data["step"]:
        raise ContentError(f"{where}: no [[step]]; expected at least one")
    steps = []
    for n, raw in enumerate(data["step"], 1):
        steps.append(_step(raw, f"{where} [[step]] {n}"))
    numbers = [s.step for s in steps]
    if numbers != sorted(set(numbers)) or numbers[0] < 1:
        raise ContentError(f"{where}: steps {numbers}; expected step numbers from 1 up, each "
                           "once, in increasing order")
    return PracticePlan(trace, tuple(steps))


def _step(raw: dict[str, Any], where: str) -> StepPlan:
    why = raw.get("why")
    if "why" in raw and not _table(why):
        raise ContentError(f"{where}: field 'why' is {why!r}; expected a table ([step.why])")
    _check_fields({k: v for k, v in raw.items() if k != "why"},
                  {k: v for k, v in _STEP.items() if k != "why"}, where)
    if why is None:
        raise ContentError(f"{where}: missing table 'why' (the self-explanation prompt)")
    if not raw["ask"]:
        raise ContentError(f"{where}: field 'ask' is empty; expected the values to compute")
    _check_fields(why, _WHY, f"{where} why")
    choices = tuple(why["choices"])
    if not 3 <= len(choices) <= 4:
        raise ContentError(f"{where} why: {len(choices)} choices; expected 3 or 4 principles")
    if len(set(choices)) != len(choices):
        raise ContentError(f"{where} why: two choices are the same")
    if not 1 <= why["answer"] <= len(choices):
        raise ContentError(f"{where} why: field 'answer' is {why['answer']}; expected 1 to "
                           f"{len(choices)} (the right choice)")
    asks = tuple(Ask.parse(a) for a in raw["ask"])
    if len({a.label for a in asks}) != len(asks):
        raise ContentError(f"{where}: field 'ask' names a value twice")
    return StepPlan(raw["step"], asks, tuple(raw.get("given", ())), tuple(raw.get("needs", ())),
                    Why(why["prompt"], choices, why["answer"] - 1, why["reason"]))


def has_plan(trace: str, root: Path | None = None) -> bool:
    return practice_path(trace, root).is_file()


def check_against(plan: PracticePlan, trace: Any) -> list[str]:
    """What in ``plan`` does not fit the built ``trace`` (an :class:`engine.trace.Trace`):
    empty when every step exists, every ask names a value of its step (and a row within it),
    every given value is one of its step's, and every need is a value of this or an earlier
    step or an input."""
    problems: list[str] = []
    for sp in plan.steps:
        if sp.step > len(trace.steps):
            problems.append(f"step {sp.step}: the trace has {len(trace.steps)} steps")
            continue
        values = trace.steps[sp.index].values
        known = set(trace.inputs).union(*(s.values for s in trace.steps[:sp.step]))
        for ask in sp.asks:
            if ask.name not in values:
                problems.append(f"step {sp.step}: ask {ask.label!r} is not one of its values "
                                f"({', '.join(values)})")
            elif ask.index is not None and not 1 <= ask.index <= _length(values[ask.name]):
                problems.append(f"step {sp.step}: ask {ask.label!r} is past the end of "
                                f"{ask.name} ({_length(values[ask.name])} rows)")
        for name in sp.given:
            if name not in values or name in {a.name for a in sp.asks}:
                problems.append(f"step {sp.step}: given {name!r} is not a value of the step "
                                "that is not asked")
        for name in sp.needs:
            if name not in known:
                problems.append(f"step {sp.step}: need {name!r} is neither a value of this or "
                                "an earlier step nor an input")
    return problems


def localise(plan: PracticePlan, trace: Any, reference: Any) -> PracticePlan | None:
    """``plan`` (written for ``reference``, the trace on the notes' numbers) with its value
    names as ``trace`` (the same trace on other inputs) calls them, or None when ``trace`` has
    another shape where the plan practises: other steps, values or rows.

    A name that carries an input in it (``Q₂`` for position 2, ``P_T=0.5``) is matched by its
    place among the step's values when the step's names have the same pattern, so a practice
    on fresh numbers asks the same steps; steps after the last one practised may differ.
    """
    last = max(sp.step for sp in plan.steps)
    if len(trace.steps) < last:
        return None
    renamed: list[dict[str, str]] = []
    for ref_step, step in zip(reference.steps, trace.steps):
        if [_pattern(n) for n in ref_step.values] == [_pattern(n) for n in step.values]:
            renamed.append(dict(zip(ref_step.values, step.values)))
        else:  # values added or dropped: only the names both have
            renamed.append({n: n for n in ref_step.values if n in step.values})

    def here(index: int, name: str) -> str | None:
        for i in range(index, -1, -1):
            if name in reference.steps[i].values:
                return renamed[i].get(name)
        return name if name in trace.inputs else None

    steps = []
    for sp in plan.steps:
        names = renamed[sp.index]
        if any(_pattern(a) != _pattern(b) for a, b in names.items()) or not names:
            return None
        if any(a.name not in names for a in sp.asks) or any(g not in names for g in sp.given):
            return None
        found = tuple(here(sp.index, n) for n in sp.needs)
        needs = tuple(n for n in found if n is not None)
        if len(needs) < len(found):
            return None
        steps.append(StepPlan(sp.step, tuple(Ask(names[a.name], a.index) for a in sp.asks),
                              tuple(names[g] for g in sp.given), needs, sp.why))
    out = PracticePlan(plan.trace, tuple(steps))
    return None if check_against(out, trace) else out


_NUMBERS = re.compile(r"[0-9₀-₉.]+")


def _pattern(name: str) -> str:
    """A value name with its numbers blanked: ``Q₂`` and ``Q₁`` are one pattern."""
    return _NUMBERS.sub("#", name)


def _length(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 0
