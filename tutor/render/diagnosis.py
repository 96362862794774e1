"""The words of a diagnosis: which catalogued mistake gives the student's number, the number
it gives, why, and where to read and practise (:class:`tutor.marking.Named`).

One wording for every place a number is checked: :func:`lines` for the line front ends (the
quiz's and the paper's ``--plain``, and the paper panel, which shows those lines) and
:func:`renderable` for the TUI's quiz screen, where the trace is named by its key. Titles and
explanations come from the catalogue and numbers from the student's problem, so the Rich
version builds every line with :mod:`tutor.render.safe`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType

from tutor.content import LESSON_IDS
from tutor.marking import Named
from tutor.render.safe import assemble, text


def where(n: Named) -> str:
    """``§8 scoring, "Formal statement"``: the lesson paragraph that teaches the right way."""
    number = f"§{LESSON_IDS.index(n.lesson) + 1} " if n.lesson in LESSON_IDS else ""
    return f'{number}{n.lesson}, "{n.heading}"' if n.heading else f"{number}{n.lesson}"


def headline(named: Sequence[Named], indent: str = "") -> str:
    """``Mistake: 1/√d_k left out (it gives 1).`` or, for several, the line that says so."""
    if len(named) == 1:
        return f"{indent}Mistake: {named[0].title} (it gives {named[0].value})."
    return f"{indent}Your number is what each of these {len(named)} mistakes gives here:"


def lines(named: Sequence[Named], indent: str = "", shown: str | None = None) -> list[str]:
    """Plain lines: the mistake, its number, why, the lesson paragraph and the commands.

    ``shown`` is the practice command the surrounding feedback already prints; a mistake
    whose trace is that one does not repeat the commands."""
    if not named:
        return []
    out = [headline(named, indent)]
    many = len(named) > 1
    for n in named:
        pad = indent + "  "
        if many:
            out.append(f"{pad}{n.title} (it gives {n.value}).")
        out.append(f"{pad}{n.explanation}")
        out.append(f"{pad}Read {where(n)}: {n.read}")
        if n.practice != shown:
            out.append(f"{pad}The right way, step by step: {n.replay}; do it yourself: {n.practice}")
    if many and named[0].follow_up:
        out.append(f"{indent}  To tell them apart, work this one: {named[0].follow_up}")
    return out


def renderable(named: Sequence[Named], trace_key: str | None = None) -> RenderableType:
    """The TUI's version: the same words, the title bold, the pointers dim; ``trace_key``
    names the key that opens the worked example on the problem's numbers (``t``), used in
    place of the replay command when the diagnosis's trace is the one that key opens."""
    if not named:
        return Group()
    parts: list[RenderableType] = [assemble(("Mistake: ", "bold yellow"),
                                            (named[0].title, "bold"),
                                            f" — it gives {named[0].value}.")
                                   if len(named) == 1 else
                                   text(headline(named), "bold yellow")]
    for n in named:
        if len(named) > 1:
            parts.append(assemble("  ", (n.title, "bold"), f" — it gives {n.value}."))
        parts.append(text("  " + n.explanation))
        replay = f"{trace_key} opens it step by step" if trace_key else n.replay
        parts.append(text(f"  Read {where(n)} · {replay} · practise: {n.practice}", "dim"))
    if len(named) > 1 and named[0].follow_up:
        parts.append(text(f"  To tell them apart: {named[0].follow_up}", "dim"))
    return Group(*parts)


def ids(named: Sequence[Named]) -> list[str]:
    """The mistake ids named (a pair as ``a+b``), as the store keeps them."""
    return [n.id for n in named]
