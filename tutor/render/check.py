"""What ``attn-tutor trace NAME --check VALUE=NUMBERS`` prints: plain text, Rich, or JSON.

Each check is an :class:`engine.mistakes.Check`: the student's numbers, the right ones, and
either "correct", "right at the digits you typed" (imprecise), the diagnosed mistakes, or
"no catalogued mistake gives this". Data strings (value names, explanations, the inputs of a
follow-up problem) reach the terminal through :mod:`tutor.render.safe`; the JSON schema is
the "--check" section of ``tutor/schemas/trace-json.md``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich.console import Group
from rich.padding import Padding

from engine.trace import fmt, to_jsonable
from tutor.inputs import trace_command
from tutor.render.safe import assemble, clean, json_dumps, text
from tutor.render.text import asciify

WIDTH = 78


def verdict(check: Any) -> str:
    """One word for the check: correct, imprecise, diagnosed or unknown."""
    if check.correct:
        return "correct"
    if check.imprecise:
        return "imprecise"
    return "diagnosed" if check.diagnoses else "unknown"


def _num(value: Any) -> str:
    return fmt(np.asarray(value, dtype=np.float64), 4)


def _link(check: Any, diagnosis: Any) -> str:
    anchor = f' ("{diagnosis.anchor}")' if diagnosis.anchor else ""
    return (f"read: attn-tutor lesson {diagnosis.lesson}{anchor}; the right way: "
            f"attn-tutor trace {diagnosis.trace}")


def check_parts(check: Any, trace: str, ascii_only: bool = True) -> list[tuple[int, str]]:
    """One check as (indent, paragraph) pairs, the first being its verdict line."""
    a = asciify if ascii_only else (lambda s: s)
    out = [(0, f"{a(check.name)}: you gave {_num(check.given)}; the answer is {_num(check.expected)}")]
    if check.correct:
        out.append((4, "Correct."))
    elif check.imprecise:
        out.append((4, "Right at the digits you typed, but not precise enough: give more decimals."))
    elif not check.diagnoses:
        out.append((4, "Wrong, and no catalogued mistake gives this number. Step through the trace "
                       "to find where your working leaves it."))
    else:
        many = len(check.diagnoses) > 1
        out.append((4, "These mistakes all give your number:" if many else
                    "Your number is what this mistake gives:"))
        for d in check.diagnoses:
            out.append((4, f"- {a(d.title)} ({' + '.join(d.ids)}): gives {_num(d.value)}"))
            out.append((6, a(d.explanation)))
            out.append((6, a(_link(check, d))))
        if check.follow_up is not None:
            out.append((4, "To tell them apart, try it on these numbers:"))
            out.append((6, a(trace_command(trace, check.follow_up)) + f" --check {a(check.name)}=..."))
    return out


def checks_text(checks: Sequence[Any], trace: str, inputs: Mapping[str, Any]) -> str:
    """Every check as plain ASCII text (``--plain`` and anything not a terminal), wrapped to
    fit 80 columns; a mark ([ok], [~], [x]) says the verdict without colour."""
    marks = {"correct": "[ok]", "imprecise": "[~]", "diagnosed": "[x]", "unknown": "[x]"}
    lines: list[str] = []
    for c in checks:
        parts = check_parts(c, trace)
        lines.append(f"{marks[verdict(c)]} {parts[0][1]}")
        for indent, para in parts[1:]:
            lines += textwrap.wrap(para, WIDTH, initial_indent=" " * indent,
                                   subsequent_indent=" " * (indent + (2 if para.startswith("- ") else 0)),
                                   break_on_hyphens=False, break_long_words=False)
    return clean("\n".join(lines) + "\n")


_STYLE = {"correct": "bold green", "imprecise": "bold yellow", "diagnosed": "bold red",
          "unknown": "bold red"}
_MARK = {"correct": "✓", "imprecise": "≈", "diagnosed": "✗", "unknown": "✗"}


def checks_renderable(checks: Sequence[Any], trace: str, inputs: Mapping[str, Any]) -> Group:
    """Every check for a Rich console: a mark (✓ ≈ ✗, readable without colour) per value;
    paragraphs wrap at the console's width under their own indent."""
    parts: list[Any] = []
    for c in checks:
        v = verdict(c)
        items = check_parts(c, trace, ascii_only=False)
        parts.append(assemble((f"{_MARK[v]} ", _STYLE[v]), (items[0][1], "bold")))
        for indent, para in items[1:]:
            parts.append(Padding(text(para), (0, 0, 0, indent)))
    return Group(*parts)


def checks_json(checks: Sequence[Any], trace: str, inputs: Mapping[str, Any]) -> str:
    """Every check in the schema of the "--check" section of ``tutor/schemas/trace-json.md``."""
    data = {
        "schema": 1,
        "trace": trace,
        "inputs": to_jsonable(dict(inputs)),
        "checks": [{
            "name": c.name,
            "given": to_jsonable(c.given),
            "expected": to_jsonable(c.expected),
            "correct": c.correct,
            "imprecise": c.imprecise,
            "verdict": verdict(c),
            "diagnoses": [{
                "id": "+".join(d.ids),
                "ids": list(d.ids),
                "title": d.title,
                "explanation": d.explanation,
                "value": to_jsonable(d.value),
                "lesson": d.lesson,
                "anchor": d.anchor,
                "trace": d.trace,
            } for d in c.diagnoses],
            "follow_up": None if c.follow_up is None else to_jsonable(c.follow_up),
        } for c in checks],
    }
    return json_dumps(data, indent=2) + "\n"
