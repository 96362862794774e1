"""The Transformer experiment's heads in words, heatmaps and files: one sentence per head
(computed from its pattern shares), its heatmap with the right labels, and the ``--save``
forms that hold every head (drawn, or one JSON file each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text

from tutor import atomic
from tutor.errors import UserError
from tutor.lab.report import Part, Style, pct
from tutor.render.safe import shown_path

ALIGNED = {"reverse": "the anti-diagonal", "copy": "the diagonal", "sort": "the digit's place by value"}

PATTERN_WORDS = {
    ("cross", "aligned"): "the source digit being written ({aligned})",
    ("cross", "end"): "the source's </s>, which marks where the input ends",
    ("cross", "same position"): "the source position with the output step's index (the diagonal)",
    ("encoder", "self"): "its own position",
    ("encoder", "previous"): "the digit before it",
    ("encoder", "next"): "the digit after it",
    ("encoder", "mirror"): "the mirror position L-1-i (the anti-diagonal)",
    ("encoder", "end"): "</s>, which marks where the input ends",
    ("decoder", "self"): "its own step",
    ("decoder", "previous"): "the step before (the digit just written)",
    ("decoder", "first"): "<s>, the first input",
}


def head_sentence(head: Any, task: str) -> str:
    """What one head does on the example, in one computed sentence."""
    def words(pattern: str) -> str:
        return PATTERN_WORDS[(head.kind, pattern)].format(aligned=ALIGNED.get(task, "its place"))

    share = pct(head.share).strip()
    if head.label != "broad":
        what = f"{share} of its weight on {words(head.label)}"
        if (head.kind, head.label) == ("cross", "aligned"):
            what += ": this head does the copying"
    elif head.shares:
        top = max(head.shares, key=head.shares.get)
        what = (f"spread out (entropy {head.entropy:.2f} of uniform); the most it puts on one "
                f"pattern is {share}, on {words(top)}")
    else:
        what = f"spread out (entropy {head.entropy:.2f} of uniform)"
    return f"{head.title}: {what}."


def heads_view(res: Any, style: Style) -> list[Part]:
    """The example, the alignment heatmap of the best cross-attention head, a sentence per head."""
    heads = res.heads
    if heads is None:
        return ["No heads to show: training stopped before its first step."]
    verdict = "correct" if heads.correct else "target: " + " ".join(heads.target)
    parts: list[Part] = [f"Example: {' '.join(heads.source)} -> {' '.join(heads.output)} ({verdict})"]
    if heads.beam is not None:
        same = heads.beam == heads.output
        parts.append(f"Beam search (width {heads.beam_width}, engine.decoding) "
                     + ("writes the same" if same else "writes " + " ".join(heads.beam))
                     + f": log-probability {heads.beam_logp:.4f} against greedy's {heads.greedy_logp:.4f}.")
    best = heads.best("cross", "aligned")
    if best is not None:
        parts.append(head_heatmap(best, heads, style))
    parts += [head_sentence(h, heads.task) for h in heads.heads]
    return parts


def head_labels(head: Any, heads: Any) -> tuple[list[str], list[str]]:
    """(row labels, column labels) of one head: decoder rows are its inputs, columns likewise."""
    if head.kind == "encoder":
        return list(heads.source), list(heads.source)
    if head.kind == "decoder":
        return list(heads.decoder_in), list(heads.decoder_in)
    return list(heads.decoder_in), list(heads.source)


def head_heatmap(head: Any, heads: Any, style: Style = Style(), width: int | None = None) -> Any:
    from tutor.heatmap import HeatmapOptions, render_heatmap  # deferred: loads numpy, rich (start-up time)

    rows, cols = head_labels(head, heads)
    return render_heatmap(head.weights, rows, cols, head.title,
                          HeatmapOptions(width=width, color=style.color and not style.ascii,
                                         ascii=style.ascii, kind="weights", scale="matrix"))


def slug(head: Any) -> str:
    return f"{head.kind}-layer{head.layer + 1}-head{head.head + 1}"


def save_drawn(path: Path, res: Any) -> None:
    from tutor.heatmap import HeatmapOptions, heatmap_text  # deferred: loads numpy, rich (start-up time)
    from tutor.heatmap.export import export  # deferred: loads numpy, rich (start-up time)

    heads = res.heads
    texts = []
    for h in heads.heads:
        rows, cols = head_labels(h, heads)
        texts.append(heatmap_text(h.weights, rows, cols, h.title, HeatmapOptions(width=100, color=False))
                     + "\n" + head_sentence(h, heads.task))

    def drawn() -> list[Any]:
        out: list[Any] = []
        for h in heads.heads:
            out += [head_heatmap(h, heads, width=100), Text(head_sentence(h, heads.task)), Text("")]
        return out

    export(path, "\n\n".join(texts), drawn, width=100, title=f"Transformer heads, `{heads.task}`")


def save_folder(path: Path, res: Any) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        for h in res.heads.heads:
            rows, cols = head_labels(h, res.heads)
            data = {"title": head_sentence(h, res.heads.task), "rows": rows, "cols": cols,
                    "weights": [[float(x) for x in row] for row in h.weights]}
            atomic.write_text(path / f"{slug(h)}.json", json.dumps(data, indent=1) + "\n")
    except OSError as exc:
        raise UserError(f"--save {shown_path(path)}: could not write it "
                        f"({exc.strerror or exc})") from None
