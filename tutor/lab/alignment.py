"""``alignment``: what a trained attention model attends to, as a heatmap (reversal: the
anti-diagonal), with how much of its weight sits where the task says it should."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.errors import UserError
from tutor.lab import jsonout
from tutor.lab.files import check_heatmap_path, load_model, save_heatmap
from tutor.lab.report import Part, Style, pct
from tutor.limits import MAX_TEST_DIGITS, shorten
from tutor.render.safe import shown_path

EXPECTED = {"reverse": "anti-diagonal", "copy": "diagonal", "sort": "by value"}

if TYPE_CHECKING:
    from engine.lab.progress import ProgressFn, StopFn


@dataclass(frozen=True)
class AlignmentJob:
    """What to look at: the engine's settings, plus a trained model (``--load``) and a test
    sequence (``--digits``) when given, and where to ``--save`` the weights."""

    settings: Any
    model: Any = None
    digits: tuple[int, ...] | None = None
    loaded_from: Path | None = None
    save: Path | None = None


def job(s: Any) -> AlignmentJob:
    """A job from the engine's ``AlignmentSettings`` (or a job already)."""
    return s if isinstance(s, AlignmentJob) else AlignmentJob(s)


def defaults() -> AlignmentJob:
    from engine import lab  # deferred: loads numba (start-up time)

    return AlignmentJob(lab.AlignmentSettings())


def describe(s: Any) -> str:
    j = job(s)
    tr = j.settings.train
    if j.model is not None:
        return f"lab alignment: using the attention model in {j.loaded_from} (task `{tr.task}`)"
    return (f"lab alignment: training an attention model on `{tr.task}`, lengths "
            f"{tr.min_len}-{tr.max_len}, {tr.steps} steps")


def bars(s: Any) -> tuple[tuple[str, ...], int]:
    j = job(s)
    return ((), 0) if j.model is not None else (("attention",), j.settings.train.steps)


def run(s: Any, *, on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None) -> Any:
    from engine import lab  # deferred: loads numba (start-up time)

    j = job(s)
    return lab.alignment(j.settings, model=j.model, digits=j.digits, on_progress=on_progress,
                         should_stop=should_stop)


def stopped(res: Any) -> bool:
    return res.training is not None and res.training.interrupted


def title(res: Any) -> str:
    return f"Learned attention, `{res.task}`"


def heatmap_view(res: Any, style: Style = Style(), width: int | None = None) -> Any:
    """The attention weights as a heatmap (rows: output tokens, columns: source tokens)."""
    from tutor.heatmap import HeatmapOptions, render_heatmap  # deferred: loads numpy, rich (start-up time)

    heading = f"{title(res)} (expected: {EXPECTED.get(res.task, '?')})"
    return render_heatmap(res.weights, res.row_labels, res.col_labels, heading,
                          HeatmapOptions(width=width, color=style.color and not style.ascii,
                                         ascii=style.ascii, kind="weights", scale="matrix"))


def summary(res: Any) -> list[str]:
    """Output vs target, and how much of the attention sits where the task says it should."""
    rows = sum(1 for c in res.expected if c is not None)
    where = {"reverse": "the anti-diagonal", "copy": "the diagonal"}.get(
        res.task, "the source position of the digit written")
    which = "digit rows" if res.task != "sort" else "rows of digits that occur once"
    verdict = "correct" if res.correct else "target: " + " ".join(res.target)
    out = [f"source: {' '.join(res.col_labels)}",
           f"output: {' '.join(res.row_labels)}  ({verdict})"]
    if rows:
        hits = round(res.argmax_match * rows)
        near = round(res.argmax_near * rows)
        out.append(f"The largest weight of {hits} of {rows} {which} ({pct(res.argmax_match).strip()}) "
                   f"lies on {where}, of {near} ({pct(res.argmax_near).strip()}) within one "
                   f"position of it; mean weight on it {res.mass_on_expected:.2f}.")
    if res.training is not None:
        t = res.training
        out.append(f"Trained for {t.steps} steps in {t.seconds:.1f} s"
                   f"{' (interrupted)' if t.interrupted else ''}.")
    return out


def report(res: Any, s: Any, style: Style) -> list[Part]:
    return [heatmap_view(res, style), *summary(res)]


def heatmaps(res: Any) -> list[Any]:
    """The learned weights for the Heatmaps area."""
    from engine.trace import HeatmapData  # deferred: loads numpy (start-up time)

    return [HeatmapData(title(res), res.weights, list(res.row_labels), list(res.col_labels))]


def save(res: Any, s: Any) -> list[str]:
    """``--save``: the weights as ``.json`` (for ``heatmap --from``) or drawn; one note."""
    j = job(s)
    if j.save is None:
        return []

    save_heatmap(j.save, title(res), res.weights, res.row_labels, res.col_labels,
                 lambda: [heatmap_view(res, width=100)])
    return [f"wrote {shown_path(j.save)}"]


def to_json(res: Any, s: Any) -> dict[str, Any]:
    j = job(s)
    return jsonout.header(
        "alignment",
        settings=j.settings.to_dict() if j.model is None else None,
        task=res.task,
        source=res.col_labels,
        output=res.row_labels,
        target=res.target,
        correct=res.correct,
        weights=[[round(float(x), 6) for x in row] for row in res.weights],
        expected_column=res.expected,
        argmax_on_expected=round(res.argmax_match, 6),
        argmax_within_one=round(res.argmax_near, 6),
        mean_weight_on_expected=round(res.mass_on_expected, 6),
        training=jsonout.training_run(res.training) if res.training is not None else None,
    )


def from_options(*, seed: int, task: str, digits: str | None, length: int, load: Path | None,
                 save: Path | None, steps: int | None = None,
                 max_len: int | None = None) -> AlignmentJob:
    """The job ``attn-tutor lab alignment`` asks for (a loaded model's task wins unless a task
    or digits were given).

    Raises:
        UserError: an unknown ``--save`` type (before any training), ``--digits`` that are not
            digits, or an unusable ``--load`` file.
    """
    from engine import lab  # deferred: loads numba (start-up time)

    if save is not None:
        check_heatmap_path(save)
    seq = None
    if digits is not None:
        if not digits.isdigit() or not digits.isascii():
            raise UserError(f"--digits: expected only the digits 0-9, got {shorten(digits)}")
        if len(digits) > MAX_TEST_DIGITS:
            raise UserError(f"--digits: {len(digits)} digits; expected at most {MAX_TEST_DIGITS} "
                            "(as --length)")
        seq = tuple(int(c) for c in digits)
    s = lab.AlignmentSettings(test_len=length)
    tr = replace(s.train, seed=seed, task=task, steps=steps or s.train.steps,
                 max_len=max_len or s.train.max_len)
    tr = replace(tr, min_len=min(tr.min_len, tr.max_len))
    model = None
    if load is not None:
        model, record = load_model(load, decoder="attention")
        if record.get("task") and digits is None and task == "reverse" and record["task"] != task:
            tr = replace(tr, task=record["task"])
    return AlignmentJob(replace(s, train=tr), model, seq, loaded_from=load, save=save)
