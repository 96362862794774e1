"""``bottleneck``: a fixed context vector against attention on reversal, by source length
(Bahdanau et al. 2014, Fig. 2), both trained here identically."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tutor.lab import jsonout
from tutor.lab.report import (
    Part,
    Style,
    accuracy_plot,
    accuracy_table,
    evaluated,
    evaluation_note,
    model_desc,
    pct,
)


def describe(s: Any) -> str:
    tr = s.train
    return (f"lab bottleneck: training a fixed-context and an attention model on `{tr.task}`, "
            f"lengths {tr.min_len}-{tr.max_len}, {tr.steps} steps of {tr.batch_size} each")


def bars(s: Any) -> tuple[tuple[str, ...], int]:
    return ("attention", "fixed"), s.train.steps


def report(res: Any, s: Any, style: Style) -> list[Part]:
    tr = res.settings.train
    cfg = res.settings.model_config("attention")
    a_steps, f_steps = res.runs["attention"].steps, res.runs["fixed"].steps
    steps_txt = (f"{a_steps} training steps" if a_steps == f_steps
                 else f"{a_steps} (attention) and {f_steps} (fixed) training steps")
    n = evaluated({"attention": res.attention, "fixed": res.fixed})
    runs = {"attention": res.attention[:n], "fixed": res.fixed[:n]}
    parts: list[Part] = [
        f"Bottleneck: `{tr.task}` digit sequences, {model_desc(cfg)}; {steps_txt} of "
        f"{tr.batch_size} sequences per model; free-running greedy decoding on "
        f"{res.settings.per_bucket} held-out sequences per length."]
    if n:
        parts += [accuracy_table(res.buckets[:n], runs, ascii=style.ascii),
                  accuracy_plot(runs, ascii=style.ascii, width=style.width)]
    if note := evaluation_note(n, len(res.buckets)):
        parts.append(note)
    worst = _worst_up_to_30(res, n)
    if worst is not None:
        parts.append(f"Attention up to length 30: lowest token accuracy {pct(worst).strip()} "
                     f"({'>=' if style.ascii else '≥'} 95%: {'yes' if worst >= 0.95 else 'no'}).")
    if n == len(res.buckets) and n:
        gap = res.gap_at_longest()
        last = res.attention[-1]
        verdict = "the bottleneck is reproduced" if gap >= 0.30 else "gap under 30 points"
        parts.append(f"Longest bucket ({last.lo}-{last.hi}): the fixed context is {100 * gap:.1f} "
                     f"points below attention ({verdict}).")
    a, f = res.runs["attention"], res.runs["fixed"]
    parts.append(f"Wall time {res.seconds:.1f} s (training: attention {a.seconds:.1f} s, "
                 f"{a.steps_per_second:.1f} steps/s; fixed {f.seconds:.1f} s, "
                 f"{f.steps_per_second:.1f} steps/s).")
    return parts


def _worst_up_to_30(res: Any, n: int) -> float | None:
    """Attention's lowest token accuracy over the buckets up to length 30, when all of them
    were evaluated (``n`` buckets were)."""
    wanted = [k for k, (_, hi) in enumerate(res.buckets) if hi <= 30]
    if not wanted or wanted[-1] >= n:
        return None
    return min(res.attention[k].token_accuracy for k in wanted)


def to_json(res: Any, s: Any) -> dict[str, Any]:
    att, fix = res.attention, res.fixed
    n = evaluated({"attention": att, "fixed": fix})
    worst = _worst_up_to_30(res, n)
    return jsonout.header(
        "bottleneck",
        settings=res.settings.to_dict(),
        interrupted=res.interrupted,
        seconds=round(res.seconds, 3),
        buckets=[{"lengths": [lo, hi], "n": a.n,
                  "attention": {"token_accuracy": round(a.token_accuracy, 6),
                                "sequence_accuracy": round(a.sequence_accuracy, 6)},
                  "fixed": {"token_accuracy": round(f.token_accuracy, 6),
                            "sequence_accuracy": round(f.sequence_accuracy, 6)}}
                 for (lo, hi), a, f in zip(res.buckets, att, fix)],
        summary={
            "attention_min_token_accuracy_up_to_30": round(worst, 6) if worst is not None else None,
            "gap_at_longest_bucket": (round(res.gap_at_longest(), 6)
                                      if n == len(res.buckets) and n else None),
        },
        runs={name: jsonout.training_run(r) for name, r in res.runs.items()},
    )


def from_options(*, seed: int, steps: int | None = None, min_len: int | None = None,
                 max_len: int | None = None, per_bucket: int | None = None,
                 hidden: int | None = None, sequential: bool = False) -> Any:
    """The defaults with the options given (None: keep the default)."""
    from engine import lab  # deferred: loads numba (start-up time)

    s = lab.BottleneckSettings()
    tr = s.train
    tr = replace(tr, seed=seed, steps=steps or tr.steps, min_len=min_len or tr.min_len,
                 max_len=max_len or tr.max_len)
    return replace(s, train=tr, per_bucket=per_bucket or s.per_bucket,
                   hidden_dim=hidden or s.hidden_dim, parallel=not sequential)
