"""A trace as Markdown a student can paste into their notes (``--markdown``)."""

from __future__ import annotations

from engine.trace import Trace
from tutor.render.safe import clean
from tutor.render.text import source_label, value_lines


def _prose(text: str) -> str:
    """Text outside code: ``<EOS>``, ``</s>`` and ``<pad>`` would be read as HTML tags and
    vanish from the rendered notes, so the angle brackets become entities."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str, prose: bool = True) -> str:
    """A table cell; ``prose=False`` for cells that are already code spans."""
    return (_prose(text) if prose else text).replace("|", "\\|").replace("\n", "<br>")


def _value(value) -> str:
    shown = value_lines(value)
    if len(shown) == 1:
        return f"`{shown[0]}`"
    return "<br>".join(f"`{line}`" for line in shown)


def _values_table(values: dict) -> list[str]:
    out = ["| name | value |", "| --- | --- |"]
    out += [f"| `{_cell(k, prose=False)}` | {_cell(_value(v), prose=False)} |" for k, v in values.items()]
    return out


def _step(trace: Trace, i: int) -> list[str]:
    step = trace.steps[i]
    out = [f"## Step {i + 1}. {_prose(step.title)}", "", "```text", step.formula, "```", "",
           "With the numbers:", "", "```text", step.substitution, "```", ""]
    if step.values:
        out += _values_table(step.values) + [""]
    if step.note:
        out += [f"> {_prose(step.note)}", ""]
    return out


def render_markdown(trace: Trace, step: int | None = None) -> str:
    """The whole trace, or only step ``step`` (1-based), as Markdown."""
    if step is not None:
        return clean("\n".join(_step(trace, step - 1)).rstrip() + "\n")
    out = [f"# {_prose(trace.title)} (`{trace.name}`, lecture §{trace.section})", "",
           f"*Numbers from: {source_label(trace.source)}.*", ""]
    if trace.summary:
        out += [_prose(trace.summary), ""]
    out += ["**Inputs**", ""] + _values_table(trace.inputs) + [""]
    for i in range(len(trace.steps)):
        out += _step(trace, i)
    out += ["## Result", ""] + _values_table(trace.result) + [""]
    if trace.fused:
        bad = trace.disagreements()
        out += ["The step-by-step values agree with the one-call engine functions." if not bad
                else "**Check failed:** " + _prose("; ".join(bad)), ""]
    if trace.errata:
        out += ["## Errata: the notes vs the engine", "",
                "| where | printed | computed | why |", "| --- | --- | --- | --- |"]
        out += [f"| {_cell(e.where)} | {_cell(e.printed)} | {_cell(e.computed)} | {_cell(e.why)} |"
                for e in trace.errata]
        out.append("")
    out.append(f"*Made with `attn-tutor trace {trace.name} --markdown`.*")
    return clean("\n".join(out) + "\n")  # no terminal control from the trace's data
