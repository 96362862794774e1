"""``transformer``: a tiny encoder-decoder Transformer trained live on the lab's task, scored by
length like the RNNs (and, with ``--rnn``, next to them), with what each of its heads does and
the same model trained without positional encodings."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.errors import UserError
from tutor.lab import jsonout
from tutor.lab.files import TRANSFORMER_FORMAT, load_transformer, save_model
from tutor.lab.heads import head_labels, head_sentence, heads_view, save_drawn, save_folder, slug
from tutor.lab.report import (
    Part,
    Style,
    accuracy_plot,
    accuracy_table,
    evaluated,
    evaluation_note,
    loss_plot,
    pct,
)
from tutor.render.safe import shown_path

if TYPE_CHECKING:
    from engine.lab.progress import ProgressFn, StopFn

WEIGHTS_SUFFIXES = (".npz",)
DRAWN_SUFFIXES = (".txt", ".svg", ".html")


@dataclass(frozen=True)
class TransformerJob:
    """What to run: the engine's settings; ``rnn`` (the RNN pair's ``BottleneckSettings``) also
    trains the RNN lab's fixed-context and attention models on the same data; ``model`` is a
    Transformer loaded with ``--load`` (then nothing is trained); ``digits`` the example the
    heads are shown on; ``save`` the ``--save`` paths."""

    settings: Any
    rnn: Any = None
    model: Any = None
    loaded_from: Path | None = None
    digits: tuple[int, ...] | None = None
    save: tuple[Path, ...] = ()


def job(s: Any) -> TransformerJob:
    return s if isinstance(s, TransformerJob) else TransformerJob(s)


def job_defaults() -> TransformerJob:
    """The default run: the Transformer and its no-positions twin (about 40 s on two free cores)."""
    from engine.lab.transformer import TransformerSettings  # deferred: loads numba (start-up time)

    return TransformerJob(TransformerSettings())


def job_defaults_with_rnn() -> TransformerJob:
    """The default run plus the RNN lab's fixed-context and Bahdanau models on the same data."""
    from engine.lab.transformer import rnn_defaults  # deferred: loads numba (start-up time)

    return replace(job_defaults(), rnn=rnn_defaults())


def describe(s: Any) -> str:
    j = job(s)
    tr = j.settings.train
    if j.model is not None:
        return f"lab transformer: scoring the Transformer in {j.loaded_from} on `{tr.task}`"
    runs = ["a Transformer"]
    if j.settings.positions_experiment:
        runs.append("the same model without positions")
    if j.rnn is not None:
        runs.append("the RNN lab's fixed-context and attention models")
    return ("lab transformer: training "
            f"{', '.join(runs[:-1]) + ' and ' + runs[-1] if len(runs) > 1 else runs[0]}"
            f" on `{tr.task}`, lengths {tr.min_len}-{tr.max_len}, {tr.steps} steps of {tr.batch_size}"
            + (f", dropout {j.settings.dropout:g}" if j.settings.dropout else ""))


def bars(s: Any) -> tuple[tuple[str, ...], int]:
    j = job(s)
    if j.model is not None:
        return (), 0
    names = ["transformer"] + (["no positions"] if j.settings.positions_experiment else [])
    if j.rnn is not None:
        names += ["attention", "fixed"]             # their own bars take their own step count
    return tuple(names), j.settings.train.steps


def run(s: Any, *, on_progress: ProgressFn | None = None, should_stop: StopFn | None = None) -> Any:
    from engine.lab.transformer import score_model, transformer  # deferred: loads numba (start-up time)

    j = job(s)
    if j.model is not None:
        return score_model(j.model, j.settings, digits=j.digits, should_stop=should_stop)
    return transformer(j.settings, digits=j.digits, rnn=j.rnn, on_progress=on_progress,
                       should_stop=should_stop)


# ---------------------------------------------------------------------------- words


def model_words(cfg: Any) -> str:
    """``d_model 64, 2 heads of 32, d_ff 128, 2 encoder + 2 decoder layers, pre-norm`` (and
    ``, dropout 0.1`` when it trains with dropout)."""
    drop = f", dropout {cfg.dropout:g}" if getattr(cfg, "dropout", 0.0) else ""
    return (f"d_model {cfg.d_model}, {cfg.num_heads} heads of {cfg.d_head}, d_ff {cfg.d_ff}, "
            f"{cfg.num_encoder_layers} encoder + {cfg.num_decoder_layers} decoder layers, "
            f"pre-norm{drop}")


def _runs(res: Any) -> dict[str, Any]:
    return {name: r.accuracy for name, r in res.runs.items()}


def complete(res: Any, run: str) -> bool:
    """Whether ``run`` was scored on every length bucket (a stop can end its evaluation)."""
    return run in res.runs and len(res.runs[run].accuracy) == len(res.buckets)


def missing_buckets(res: Any) -> dict[str, list[tuple[int, int]]]:
    """Per run, the length buckets a stop left unscored (runs scored on all are left out)."""
    return {name: [tuple(b) for b in res.buckets[len(r.accuracy):]]
            for name, r in res.runs.items() if len(r.accuracy) < len(res.buckets)}


def missing_note(res: Any) -> str:
    """Which buckets were not evaluated, run by run (empty when every run finished)."""
    missing = missing_buckets(res)
    if not missing:
        return ""
    head = evaluation_note(evaluated(_runs(res)), len(res.buckets))
    every = len(missing) == len(res.runs)
    if every and all(len(b) == len(res.buckets) for b in missing.values()):
        return head                                     # nothing scored: the head says it all

    def lengths(b: list[tuple[int, int]]) -> str:
        return "lengths " + ", ".join(f"{lo}-{hi}" for lo, hi in b)

    if every and len({tuple(b) for b in missing.values()}) == 1:
        each = f"{lengths(next(iter(missing.values())))} (every run)"
    else:
        each = "; ".join(f"{name} {lengths(b)}" for name, b in missing.items())
    return f"{head} Not evaluated: {each}."


def summary(res: Any, style: Style) -> list[str]:
    """Sentences: the ≥ 95 % check, the positions experiment (each only when its run was
    scored on every bucket), the times."""
    ge = ">=" if style.ascii else "≥"
    out = []
    if complete(res, "transformer"):
        worst = res.worst_bucket()
        ok = "yes" if worst.sequence_accuracy >= 0.95 else "no"
        out.append(f"Transformer: lowest sequence accuracy {pct(worst.sequence_accuracy).strip()} "
                   f"(lengths {worst.lo}-{worst.hi}); {ge} 95% in every bucket: {ok}.")
    if complete(res, "no positions"):
        nopos = res.runs["no positions"].accuracy
        best = max(nopos, key=lambda a: a.sequence_accuracy)
        tokens = pct(max(a.token_accuracy for a in nopos)).strip()
        if best.sequence_accuracy > 0:
            reach = (f"reaches at most {pct(best.sequence_accuracy).strip()} sequence accuracy "
                     f"(lengths {best.lo}-{best.hi}; at most {tokens} of tokens right)")
        else:
            reach = f"gets no whole sequence right in any bucket (at most {tokens} of tokens)"
        out.append(f"Without positions the same model {reach}: self-attention sees the source "
                   "as a bag of digits, so nothing tells it which came last.")
    times = "; ".join(f"{name}: {r.steps} steps in {r.seconds:.1f} s, {r.steps_per_second:.1f} steps/s"
                      for name, r in res.runs.items() if r.steps)
    out.append(f"Wall time {res.seconds:.1f} s" + (f" ({times})." if times else "."))
    return out


def report(res: Any, s: Any, style: Style) -> list[Part]:
    st = res.settings
    tr = st.train
    trained = res.runs["transformer"].steps
    how = (f"{trained} steps of {tr.batch_size} sequences" if trained
           else "loaded, not trained here")
    n = evaluated(_runs(res))
    runs = {name: accs[:n] for name, accs in _runs(res).items()}
    parts: list[Part] = [
        f"Transformer: `{tr.task}` digit sequences, {model_words(res.config)}; {how}; "
        f"free-running greedy decoding on {st.per_bucket} held-out sequences per length (the "
        "RNN lab's buckets)."]
    if n:
        parts += ["Whole outputs right (sequence accuracy, EOS included) per length bucket; "
                  "token accuracies are in --json.",
                  accuracy_table(res.buckets[:n], runs, ascii=style.ascii, metrics=("sequence",)),
                  accuracy_plot(runs, ascii=style.ascii, width=style.width, metric="sequence")]
    if note := missing_note(res):
        parts.append(note)
    curves = [r.curve for r in res.runs.values() if r.curve.losses]
    if curves:
        parts.append(loss_plot(curves, ascii=style.ascii, width=style.width))
    parts += summary(res, style)
    parts += heads_view(res, style)
    return parts


# ---------------------------------------------------------------------------- heatmaps and files


def heatmaps(res: Any) -> list[Any]:
    """Every head, one matrix each, titled with its sentence (the Heatmaps area)."""
    from engine.trace import HeatmapData  # deferred: loads numpy (start-up time)

    if res.heads is None:
        return []
    out = []
    for h in res.heads.heads:
        rows, cols = head_labels(h, res.heads)
        out.append(HeatmapData(head_sentence(h, res.heads.task), h.weights, rows, cols))
    return out


def check_save(path: Path) -> None:
    """Fail before training when ``--save`` names something this experiment cannot write."""
    suffix = path.suffix.lower()
    if suffix in WEIGHTS_SUFFIXES + DRAWN_SUFFIXES or suffix == "" or path.is_dir():
        return
    raise UserError(f"--save {shown_path(path)}: unknown file type {suffix!r}; expected .npz (the weights), "
                    ".txt, .svg or .html (every head drawn), or a folder (one .json per head)")


def save(res: Any, s: Any) -> list[str]:
    """``--save``: weights (``.npz``), every head drawn (``.txt``/``.svg``/``.html``), or a
    folder with one ``.json`` per head (for ``attn-tutor heatmap --from``); one note each."""
    j = job(s)
    notes = []
    for path in j.save:
        suffix = path.suffix.lower()
        if suffix == ".npz":
            model = res.runs["transformer"].model
            save_model(path, model, {"task": res.settings.train.task,
                                     "settings": res.settings.to_dict()}, TRANSFORMER_FORMAT)
            notes.append(f"wrote {shown_path(path)} (load it with `attn-tutor lab transformer --load "
                         f"{shown_path(path)}`)")
        elif res.heads is None:
            notes.append(f"did not write {shown_path(path)}: no heads to draw")
        elif suffix in DRAWN_SUFFIXES:
            save_drawn(path, res)
            notes.append(f"wrote {shown_path(path)} ({len(res.heads.heads)} heads)")
        else:
            save_folder(path, res)
            notes.append(f"wrote {len(res.heads.heads)} heatmaps to {shown_path(path)}/ (view one with "
                         "`attn-tutor heatmap --from "
                         f"{shown_path(path / (slug(res.heads.heads[-1]) + '.json'))}`)")
    return notes


# ---------------------------------------------------------------------------- JSON


def to_json(res: Any, s: Any) -> dict[str, Any]:
    j = job(s)
    heads = res.heads
    n = evaluated(_runs(res))
    return jsonout.header(
        "transformer",
        settings=res.settings.to_dict(),
        model=res.config.to_dict(),
        n_params=res.config.n_params,
        loaded_from=str(j.loaded_from) if j.loaded_from else None,
        interrupted=res.interrupted,
        seconds=round(res.seconds, 3),
        buckets=[{"lengths": [lo, hi], "n": res.runs["transformer"].accuracy[k].n,
                  **{name: {"token_accuracy": round(r.accuracy[k].token_accuracy, 6),
                            "sequence_accuracy": round(r.accuracy[k].sequence_accuracy, 6)}
                     for name, r in res.runs.items()}}
                 for k, (lo, hi) in enumerate(res.buckets[:n])],
        not_evaluated={name: [list(b) for b in missing]
                       for name, missing in missing_buckets(res).items()},
        summary={
            "transformer_min_sequence_accuracy": round(res.worst_bucket().sequence_accuracy, 6)
            if complete(res, "transformer") else None,
            "no_positions_max_sequence_accuracy": round(max(
                a.sequence_accuracy for a in res.runs["no positions"].accuracy), 6)
            if complete(res, "no positions") else None,
        },
        runs={name: jsonout.training_run(r) for name, r in res.runs.items()},
        example=None if heads is None else {
            "digits": list(heads.digits), "source": heads.source, "decoder_input": heads.decoder_in,
            "output": heads.output, "target": heads.target, "correct": heads.correct,
            "greedy_logp": jsonout.rounded(heads.greedy_logp), "beam": heads.beam,
            "beam_logp": jsonout.rounded(heads.beam_logp), "beam_width": heads.beam_width},
        heads=[] if heads is None else [
            {"kind": h.kind, "layer": h.layer + 1, "head": h.head + 1, "label": h.label,
             "share": round(h.share, 6), "entropy": round(h.entropy, 6),
             "shares": {k: round(v, 6) for k, v in h.shares.items()},
             "sentence": head_sentence(h, heads.task),
             "weights": [[round(float(x), 6) for x in row] for row in h.weights]}
            for h in heads.heads],
    )


# ---------------------------------------------------------------------------- options


def from_options(*, seed: int, task: str, rnn: bool = False, positions_run: bool = True,
                 digits: str | None = None, load: Path | None = None,
                 save: tuple[Path, ...] = (), steps: int | None = None,
                 min_len: int | None = None, max_len: int | None = None,
                 per_bucket: int | None = None, sequential: bool = False,
                 dropout: float = 0.0) -> TransformerJob:
    """The job ``attn-tutor lab transformer`` asks for.

    Raises:
        UserError: an unknown ``--save`` type (before any training), a ``--dropout`` outside
            [0, 1), ``--digits`` that are not digits or longer than the model can read, or an
            unusable ``--load`` file.
    """
    # deferred: loads numba (start-up time)
    from engine.lab.transformer import TransformerSettings, rnn_defaults

    if not (math.isfinite(dropout) and 0.0 <= dropout < 1.0):
        raise UserError(f"--dropout: expected a probability p with 0 <= p < 1, got {dropout:g}")
    for path in save:
        check_save(path)
    s = TransformerSettings()
    tr = replace(s.train, seed=seed, task=task, steps=steps or s.train.steps,
                 min_len=min_len or s.train.min_len, max_len=max_len or s.train.max_len)
    tr = replace(tr, min_len=min(tr.min_len, tr.max_len))
    s = replace(s, train=tr, per_bucket=per_bucket or s.per_bucket, parallel=not sequential,
                positions_experiment=positions_run, dropout=dropout)
    model = None
    if load is not None:
        model, record = load_transformer(load)
        if record.get("task") in ("reverse", "copy", "sort") and task == "reverse":
            s = replace(s, train=replace(s.train, task=record["task"]))   # the model's own task
        if dropout:
            raise UserError("--dropout with --load: nothing is trained, so nothing would be "
                            "dropped (evaluation never drops)")
        if any(p.suffix.lower() == ".npz" for p in save):
            raise UserError("--save FILE.npz with --load: nothing is trained, so there are no new "
                            "weights to write")
        if model.config.positions != "sinusoidal":
            raise UserError(f"{shown_path(load)}: holds a model without positions; load the one with them")
    seq = None
    if digits is not None:
        if not digits.isdigit() or not digits.isascii():
            raise UserError(f"--digits: expected only the digits 0-9, got {digits!r}")
        limit = (model.config.max_len if model is not None else s.model_config().max_len) - 1
        if len(digits) > limit:
            raise UserError(f"--digits: {len(digits)} digits; this model reads at most {limit}")
        seq = tuple(int(c) for c in digits)
    pair = None
    if rnn and model is None:
        pair = rnn_defaults()
        if steps:                                   # the testing knob shortens every run
            pair = replace(pair, train=replace(pair.train, steps=steps))
        pair = replace(pair, parallel=not sequential)
    return TransformerJob(s, rnn=pair, model=model, loaded_from=load, digits=seq, save=tuple(save))
