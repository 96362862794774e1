"""``teacher-forcing``: the same model trained with teacher-forcing ratio 1.0 and 0.0."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tutor.lab import jsonout
from tutor.lab.report import Part, Style, accuracy_table, evaluated, evaluation_note, loss_plot, model_desc

THRESHOLD = 0.5  # loss per token the summary times each run to


def describe(s: Any) -> str:
    tr = s.train
    return (f"lab teacher-forcing: the same {s.decoder} model trained with ratios "
            f"{', '.join(f'{r:g}' for r in s.ratios)} for {tr.steps} steps on `{tr.task}`, "
            f"lengths {tr.min_len}-{tr.max_len}")


def bars(s: Any) -> tuple[tuple[str, ...], int]:
    from engine.lab import ratio_label  # deferred: loads numba (start-up time)

    return tuple(ratio_label(r) for r in s.ratios), s.train.steps


def report(res: Any, s: Any, style: Style) -> list[Part]:
    s = res.settings
    parts: list[Part] = [
        f"Teacher forcing: `{s.train.task}`, {model_desc(s.model_config())}, {s.decoder} decoder; "
        "ratio 1 feeds the true previous token, ratio 0 the model's own guess.",
        loss_plot(res.curves(), ascii=style.ascii, width=style.width),
    ]
    n = evaluated({name: r.accuracy for name, r in res.runs.items()})
    runs = {name: r.accuracy[:n] for name, r in res.runs.items()}
    first = next(iter(runs.values()))
    if n:
        parts += ["Free-running greedy accuracy on held-out sequences:",
                  accuracy_table([(a.lo, a.hi) for a in first], runs, ascii=style.ascii)]
    if res.interrupted and (note := evaluation_note(n, _planned_buckets(s))):
        parts.append(note)
    for name, r in res.runs.items():
        tail = r.curve.losses[-50:]
        mean = sum(tail) / len(tail) if tail else float("nan")
        reached = r.curve.first_below(THRESHOLD)
        when = f"{reached} steps" if reached is not None else f"never ({r.steps} steps)"
        parts.append(f"{name}: loss per token over the last {len(tail)} steps {mean:.3f}; "
                     f"below {THRESHOLD} after {when}; step-to-step jumps "
                     f"{r.curve.roughness():.3f}; {r.steps} steps in {r.seconds:.1f} s.")
    parts.append("Note: each curve is scored on the inputs its own regime feeds (true or "
                 "predicted history); the table compares both the same way.")
    return parts


def _planned_buckets(s: Any) -> int:
    from engine.lab import length_buckets  # deferred: loads numba (start-up time)

    return len(length_buckets(s.train.min_len, s.train.max_len))


def to_json(res: Any, s: Any) -> dict[str, Any]:
    return jsonout.header(
        "teacher-forcing",
        settings=res.settings.to_dict(),
        interrupted=res.interrupted,
        seconds=round(res.seconds, 3),
        runs={name: {"teacher_forcing_ratio": r.settings.teacher_forcing_ratio,
                     "first_step_below_0.5": r.curve.first_below(0.5),
                     "roughness": jsonout.rounded(r.curve.roughness()), **jsonout.training_run(r)}
              for name, r in res.runs.items()},
    )


def from_options(*, seed: int, steps: int | None = None, max_len: int | None = None,
                 per_bucket: int | None = None, sequential: bool = False) -> Any:
    """The defaults with the options given (None: keep the default)."""
    from engine import lab  # deferred: loads numba (start-up time)

    s = lab.TeacherForcingSettings()
    tr = replace(s.train, seed=seed, steps=steps or s.train.steps,
                 max_len=max_len or s.train.max_len)
    tr = replace(tr, min_len=min(tr.min_len, tr.max_len))
    return replace(s, train=tr, per_bucket=per_bucket or s.per_bucket, parallel=not sequential)
