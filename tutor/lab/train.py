"""``train``: one model, any task, sizes, cell, decoder and ratio; saved and loaded as ``.npz``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.errors import UserError
from tutor.lab import jsonout
from tutor.lab.files import load_model, save_model
from tutor.lab.report import Part, Style, accuracy_table, evaluation_note, loss_plot, model_desc
from tutor.render.safe import shown_path

if TYPE_CHECKING:
    from engine.lab.progress import ProgressFn, StopFn


@dataclass(frozen=True)
class TrainJob:
    """One model (``config``; or ``model`` to continue) and how to train it, with the files.

    ``record`` is what ``--load`` read with the model (its task, lengths and steps so far).
    """

    config: Any
    settings: Any
    model: Any = None
    per_bucket: int = 50
    loaded_from: Path | None = None
    save: Path | None = None
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def prior_steps(self) -> int:
        return int(self.record.get("steps", 0) or 0)


def defaults() -> TrainJob:
    from engine import lab  # deferred: loads numba (start-up time)
    from engine.seq2seq import Seq2SeqConfig  # deferred: loads numba (start-up time)

    settings = lab.TrainSettings(min_len=5, max_len=20, steps=1000)
    return TrainJob(Seq2SeqConfig(vocab_size=lab.VOCAB_SIZE, embed_dim=16, hidden_dim=64,
                                  attn_dim=32), settings)


def describe(j: TrainJob) -> str:
    s, c = j.settings, j.config
    what = f"continuing {j.loaded_from}" if j.loaded_from else "a new model"
    return (f"lab train: {what}: {c.decoder} decoder, {model_desc(c)}, {c.n_params} parameters; "
            f"`{s.task}`, lengths {s.min_len}-{s.max_len}, {s.steps} steps")


def bars(j: TrainJob) -> tuple[tuple[str, ...], int]:
    return ((j.config.decoder,), j.settings.steps) if j.settings.steps > 0 else ((), 0)


def run(j: TrainJob, *, on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None) -> Any:
    from engine import lab  # deferred: loads numba (start-up time)

    return lab.train(j.config, j.settings, j.model, per_bucket=j.per_bucket,
                     on_progress=on_progress, should_stop=should_stop)


def save(res: Any, j: TrainJob) -> list[str]:
    """``--save``: the weights with a record of how they were trained."""
    if j.save is None:
        return []

    s = j.settings
    save_model(j.save, res.model, {"task": s.task, "min_len": s.min_len, "max_len": s.max_len,
                                   "steps": j.prior_steps + res.steps, "seed": s.seed,
                                   "teacher_forcing_ratio": s.teacher_forcing_ratio})
    return [f"saved the weights to {shown_path(j.save)}"]


def report(res: Any, j: TrainJob, style: Style) -> list[Part]:
    from engine.lab import length_buckets  # deferred: loads numba (start-up time)

    c = j.config
    parts: list[Part] = [f"{c.decoder} model, {model_desc(c)}, `{j.settings.task}`: {res.steps} "
                         f"steps in {res.seconds:.1f} s."]
    if res.curve.losses:
        parts.append(loss_plot([res.curve], ascii=style.ascii, height=8, width=style.width))
    if res.accuracy:
        parts += ["Free-running greedy accuracy on held-out sequences:",
                  accuracy_table([(a.lo, a.hi) for a in res.accuracy], {c.decoder: res.accuracy},
                                 ascii=style.ascii)]
    if res.interrupted:
        s = j.settings
        planned = len(length_buckets(s.min_len, s.max_len))
        if note := evaluation_note(len(res.accuracy), planned):
            parts.append(note)
    return parts


def to_json(res: Any, j: TrainJob) -> dict[str, Any]:
    return jsonout.header(
        "train",
        model=j.config.to_dict(),
        n_params=j.config.n_params,
        settings=asdict(res.settings),
        loaded_from=str(j.loaded_from) if j.loaded_from else None,
        saved_to=str(j.save) if j.save else None,
        **jsonout.training_run(res),
    )


def from_options(*, task: str | None, cell: str, decoder: str, bidirectional: bool, hidden: int,
                 embed: int, attn_dim: int, ratio: float, steps: int, batch: int, lr: float,
                 clip: float, min_len: int | None, max_len: int | None, save: Path | None,
                 load: Path | None, seed: int) -> TrainJob:
    """The job ``attn-tutor lab train`` asks for; a loaded model's sizes, cell, decoder (and,
    unless given, task and lengths) win over the options.

    Raises:
        UserError: a ``--save`` name that is not ``.npz``, ``--steps 0`` without ``--load``,
            ``--min-len`` above ``--max-len``, or an unusable weights file.
    """
    from engine import lab  # deferred: loads numba (start-up time)
    from engine.seq2seq import Seq2SeqConfig  # deferred: loads numba (start-up time)

    if save is not None and save.suffix != ".npz":
        raise UserError(f"--save: {shown_path(save)}: the weights file must end in .npz")
    model, record = None, dict[str, Any]()
    if load is not None:
        model, record = load_model(load)
        config = model.config
        task = task or record.get("task")
    else:
        if steps == 0:
            raise UserError("--steps 0 only makes sense with --load (evaluate a saved model)")
        config = Seq2SeqConfig(vocab_size=lab.VOCAB_SIZE, embed_dim=embed, hidden_dim=hidden,
                               attn_dim=attn_dim, cell=cell, decoder=decoder,
                               bidirectional=bidirectional)
    task = task if task in lab.TASKS else "reverse"
    min_len = min_len or _positive(record.get("min_len"), 5)
    max_len = max_len or _positive(record.get("max_len"), 20)
    if min_len > max_len:
        raise UserError(f"--min-len {min_len} is longer than --max-len {max_len}")
    if config.vocab_size != lab.VOCAB_SIZE:
        raise UserError(f"{shown_path(load)}: the model has {config.vocab_size} tokens; the lab's tasks use "
                        f"{lab.VOCAB_SIZE}")
    settings = lab.TrainSettings(task=task, min_len=min_len, max_len=max_len, steps=steps,
                                 batch_size=batch, lr=lr, max_grad_norm=clip,
                                 teacher_forcing_ratio=ratio, seed=seed)
    return TrainJob(config, settings, model, loaded_from=load, save=save, record=record)


def _positive(value: Any, default: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return value if ok else default
