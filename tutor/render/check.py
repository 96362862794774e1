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

from engine.trace import fmt, to_jsonable
from tutor.inputs import trace_command
from tutor.render.safe import assemble, clean, json_dumps, text
from tutor.render.text import asciify

WIDTH = 88


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
    anchor = f', "{diagnosis.anchor}"' if diagnosis.anchor else ""
    return f"lesson {diagnosis.lesson}{anchor}; right way: attn-tutor trace {diagnosis.trace}"


def check_lines(check: Any, trace: str, inputs: Mapping[str, Any], ascii_only: bool = True) -> list[str]:
    """One check as plain lines (ASCII unless ``ascii_only`` is False)."""
    a = asciify if ascii_only else (lambda s: s)
    mark = {"correct": "[ok]", "imprecise": "[~]", "diagnosed": "[x]", "unknown": "[x]"}[verdict(check)]
    out = [f"{mark} {a(check.name)}: you gave {_num(check.given)}; the answer is {_num(check.expected)}"]
    if check.correct:
        out.append("    Correct.")
    elif check.imprecise:
        out.append("    Right at the digits you typed, but not precise enough: give more decimals.")
    elif not check.diagnoses:
        out.append("    Wrong, and no catalogued mistake gives this number. Step through the trace "
                   "to find where your working leaves it.")
    else:
        many = len(check.diagnoses) > 1
        out.append("    " + ("These mistakes all give your number:" if many else "Your number is what this mistake gives:"))
        for d in check.diagnoses:
            out.append(f"    - {a(d.title)} ({' + '.join(d.ids)}): gives {_num(d.value)}")
            body = textwrap.wrap(a(d.explanation), WIDTH - 8)
            out += ["      " + line for line in body]
            out.append("      " + a(_link(check, d)))
        if check.follow_up is not None:
            out.append("    To tell them apart, try it on these numbers:")
            out.append("      " + a(trace_command(trace, check.follow_up)) + f" --check {a(check.name)}=...")
    return out


def checks_text(checks: Sequence[Any], trace: str, inputs: Mapping[str, Any]) -> str:
    """Every check as plain ASCII text (``--plain`` and anything not a terminal)."""
    lines: list[str] = []
    for c in checks:
        lines += check_lines(c, trace, inputs)
    return clean("\n".join(lines) + "\n")


_STYLE = {"correct": "bold green", "imprecise": "bold yellow", "diagnosed": "bold red",
          "unknown": "bold red"}
_MARK = {"correct": "✓", "imprecise": "≈", "diagnosed": "✗", "unknown": "✗"}


def checks_renderable(checks: Sequence[Any], trace: str, inputs: Mapping[str, Any]) -> Group:
    """Every check for a Rich console: a mark (✓ ≈ ✗, readable without colour) per value."""
    parts = []
    for c in checks:
        v = verdict(c)
        parts.append(assemble((f"{_MARK[v]} ", _STYLE[v]), (c.name, "bold"),
                              f": you gave {_num(c.given)}; the answer is {_num(c.expected)}"))
        for line in check_lines(c, trace, inputs, ascii_only=False)[1:]:
            parts.append(text(line))
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
