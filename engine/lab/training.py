"""Training and evaluation shared by the lab's experiments: settings, result records, the
training loop (Adam, cosine learning-rate decay, clipping) and free-running greedy evaluation
per length bucket. Progress goes through :mod:`engine.lab.progress`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from engine._alloc import keep_freed_memory
from engine._blas import single_threaded_blas
from engine._validate import check_choice, check_positive_int, check_scalar
from engine.lab.progress import ProgressEvent, ProgressFn, StopFn
from engine.lab.tasks import (
    TASKS,
    VOCAB_SIZE,
    TestSet,
    bucketed_lengths,
    length_buckets,
    make_batch,
    make_test_set,
)
from engine.seq2seq import Adam, Seq2Seq, Seq2SeqConfig, Workspace, greedy_decode, train_step

# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class BucketAccuracy:
    """Free-running greedy accuracy on the held-out sequences of one length bucket.

    token_accuracy: fraction of target digits predicted right (position by position);
    sequence_accuracy: fraction of sequences entirely right, EOS included.
    """

    lo: int
    hi: int
    n: int
    token_accuracy: float
    sequence_accuracy: float

    @property
    def label(self) -> str:
        return f"{self.lo}–{self.hi}" if self.lo != self.hi else str(self.lo)


@dataclass(frozen=True)
class LossCurve:
    """Training loss per target token at each step (as the run saw it)."""

    label: str
    losses: tuple[float, ...]

    def smoothed(self, window: int = 25) -> list[float]:
        """Trailing moving average (the first points average what exists so far)."""
        out, acc = [], 0.0
        for i, x in enumerate(self.losses):
            acc += x
            if i >= window:
                acc -= self.losses[i - window]
            out.append(acc / min(i + 1, window))
        return out

    def first_below(self, threshold: float, window: int = 25) -> int | None:
        """The first step (1-based) at which the smoothed loss is below ``threshold``."""
        for i, x in enumerate(self.smoothed(window)):
            if x < threshold:
                return i + 1
        return None

    def roughness(self, last: int = 200) -> float:
        """Mean |loss_t − loss_{t−1}| over the last ``last`` steps: how jumpy training is."""
        tail = self.losses[-last:]
        if len(tail) < 2:
            return float("nan")
        return float(np.mean(np.abs(np.diff(tail))))


Model = TypeVar("Model")
"""The model a run trained: a :class:`Seq2Seq` here, a Transformer in the Transformer lab."""


@dataclass
class TrainResult(Generic[Model]):
    """A trained model with its history.

    Attributes:
        model: the model (trained in place from its initialisation).
        settings: the training settings used.
        curve: loss per target token at each step.
        steps: steps completed (< settings.steps if interrupted).
        seconds: wall time of the training loop.
        interrupted: True when ``should_stop`` ended it early (its training or its evaluation).
        accuracy: per-bucket accuracy on held-out data, shortest lengths first (empty if not
            evaluated; only the buckets finished when a stop ended the evaluation).
    """

    model: Model
    settings: TrainSettings
    curve: LossCurve
    steps: int
    seconds: float
    interrupted: bool
    accuracy: list[BucketAccuracy] = field(default_factory=list)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("nan")


# ---------------------------------------------------------------------------- training


@dataclass(frozen=True)
class TrainSettings:
    """How to train one model.

    Attributes:
        task: one of :data:`TASKS`.
        min_len, max_len: digits per training sequence.
        steps: Adam steps.
        batch_size: sequences per step.
        lr: Adam learning rate at the start.
        lr_final: the learning rate at the last step, as a fraction of ``lr`` (cosine decay
            in between; 1.0 keeps it constant).
        max_grad_norm: global-norm clipping threshold (0 = none).
        teacher_forcing_ratio: 1.0 = always feed the ground truth, 0.0 = never.
        bucket_width: a batch's lengths lie within ±bucket_width of a random centre.
        seed: seeds the data stream and the teacher-forcing draws.
    """

    task: str = "reverse"
    min_len: int = 5
    max_len: int = 40
    steps: int = 2000
    batch_size: int = 32
    lr: float = 3e-3
    lr_final: float = 0.1
    max_grad_norm: float = 5.0
    teacher_forcing_ratio: float = 1.0
    bucket_width: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice(self.task, "task", TASKS)
        check_positive_int(self.min_len, "min_len")
        check_positive_int(self.max_len, "max_len", minimum=self.min_len)
        check_positive_int(self.steps, "steps", minimum=0)
        check_positive_int(self.batch_size, "batch_size")
        check_scalar(self.lr, "lr", low=0.0, low_open=True)
        check_scalar(self.lr_final, "lr_final", low=0.0, high=1.0)
        check_scalar(self.max_grad_norm, "max_grad_norm", low=0.0)
        check_scalar(self.teacher_forcing_ratio, "teacher_forcing_ratio", low=0.0, high=1.0)
        check_positive_int(self.bucket_width, "bucket_width", minimum=0)


def learning_rate(settings: TrainSettings, step: int) -> float:
    """Cosine decay from ``lr`` at step 0 to ``lr · lr_final`` at the last step."""
    if settings.steps <= 1:
        return settings.lr
    frac = step / (settings.steps - 1)
    return settings.lr * (settings.lr_final + (1 - settings.lr_final) * 0.5 * (1 + math.cos(math.pi * frac)))


def train_model(model: Seq2Seq, settings: TrainSettings, *, exclude: set[bytes] | None = None,
                on_progress: ProgressFn | None = None, should_stop: StopFn | None = None,
                experiment: str = "train", run: str = "model",
                report_every: int = 10, parts: int = 1,
                spare: Callable[[], Executor | None] | None = None) -> TrainResult:
    """Train ``model`` in place with Adam on freshly generated batches of ``settings.task``.

    Args:
        model: the model to train (e.g. ``Seq2Seq.init(config, seed)``).
        settings: see :class:`TrainSettings`.
        exclude: held-out digit strings never to train on.
        on_progress: called after the first step (so a screen can say training has begun),
            every ``report_every`` steps and at the end.
        should_stop: polled every step; True stops training (the result is marked).
        experiment, run: labels copied into the progress events.
        parts: split each batch's rows into this many blocks (see
            :func:`engine.seq2seq.train_step`); the run's numbers depend on ``parts`` only.
        spare: polled every step; an executor it returns runs the blocks after the first
            (a core another job has left free), None runs them on this thread.

    Returns:
        :class:`TrainResult` (no evaluation; see :func:`evaluate`).
    """
    rng = np.random.default_rng([settings.seed, 104729])
    opt = Adam(model.config.n_params, lr=settings.lr, max_grad_norm=settings.max_grad_norm)
    work = Workspace()                              # every step's work arrays, allocated once
    losses: list[float] = []
    t0 = time.perf_counter()
    interrupted = False
    keep_freed_memory()                             # no page faults for every step's arrays
    with single_threaded_blas():
        for step in range(settings.steps):
            if should_stop is not None and should_stop():
                interrupted = True
                break
            opt.lr = learning_rate(settings, step)
            lens = bucketed_lengths(rng, settings.batch_size, settings.min_len, settings.max_len,
                                    settings.bucket_width)
            batch = make_batch(settings.task, lens, rng, exclude)
            res = train_step(model, opt, batch, settings.teacher_forcing_ratio, rng, work, parts,
                             spare() if spare is not None else None)
            loss = res.loss * batch.size / batch.n_tokens
            if not math.isfinite(loss):
                raise FloatingPointError(f"{run}: the loss became {loss} at step {step + 1}; "
                                         "try a smaller learning rate")
            losses.append(loss)
            if on_progress is not None and (step == 0 or (step + 1) % report_every == 0
                                            or step + 1 == settings.steps):
                on_progress(ProgressEvent(experiment, run, "train", step + 1, settings.steps,
                                          float(np.mean(losses[-report_every:])),
                                          time.perf_counter() - t0))
    seconds = time.perf_counter() - t0
    return TrainResult(model, settings, LossCurve(run, tuple(losses)), len(losses), seconds,
                       interrupted)


def score(pred: np.ndarray, batch) -> tuple[int, int, int]:
    """(digits right, digits in all, whole sequences right) of predictions (B, ≥ T) against
    ``batch``'s targets; a sequence counts only with its EOS."""
    digits = correct = whole = 0
    for b in range(batch.size):
        L = int(batch.tgt_len[b])                  # digits + EOS
        hit = pred[b, :L] == batch.tgt[b, :L]
        digits += L - 1
        correct += int(hit[:L - 1].sum())
        whole += int(hit.all())
    return correct, digits, whole


def _seq2seq_greedy(model: Any, src: np.ndarray, steps: int, src_len: np.ndarray) -> np.ndarray:
    """The seq2seq's greedy decoding, tokens only (:func:`evaluate`'s default)."""
    return greedy_decode(model, src, steps, src_len)[0]


def evaluate(model: Model, test_set: TestSet, should_stop: StopFn | None = None,
             decode: Callable[..., np.ndarray] | None = None) -> list[BucketAccuracy]:
    """Free-running greedy decoding of every held-out sequence; accuracy per bucket.

    ``should_stop`` is polled before each bucket: True ends the evaluation there, and the
    list holds the buckets finished (shortest lengths first; empty if stopped at once).
    ``decode(model, src, steps, src_len) -> (B, steps)`` tokens; the seq2seq's greedy
    decoding by default (the lab's Transformer passes its own).
    """
    out = []
    with single_threaded_blas():
        for (lo, hi), batch in zip(test_set.buckets, test_set.batches):
            if should_stop is not None and should_stop():
                break
            T = batch.tgt.shape[1]
            pred = (decode or _seq2seq_greedy)(model, batch.src, T, batch.src_len)
            correct, digits, whole = score(pred, batch)
            out.append(BucketAccuracy(lo, hi, batch.size, correct / digits, whole / batch.size))
    return out


def warm_up() -> float:
    """Load (on a first run: compile) every kernel the lab's experiments use with one tiny
    call each: a training step (forward and backward through time, clipping, Adam) and
    greedy decoding with its attention weights. Returns the seconds it took. (The step model
    of ``engine.seq2seq.step_function``, which no experiment uses, runs the same kernels.)
    """
    t0 = time.perf_counter()
    cfg = Seq2SeqConfig(vocab_size=VOCAB_SIZE, embed_dim=2, hidden_dim=2, attn_dim=2)
    model = Seq2Seq.init(cfg, seed=0)
    rng = np.random.default_rng(0)
    batch = make_batch("reverse", [1, 2], rng)
    with single_threaded_blas():
        train_step(model, Adam(cfg.n_params), batch, 0.5, rng)
        greedy_decode(model, batch.src, 2, batch.src_len, keep_attention=True)
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------- train


def train(config: Seq2SeqConfig, settings: TrainSettings, model: Seq2Seq | None = None, *,
          per_bucket: int = 50, on_progress: ProgressFn | None = None,
          should_stop: StopFn | None = None) -> TrainResult:
    """Train one model (a fresh one from ``config``, or continue ``model``) and evaluate it
    per length bucket on held-out data."""
    if model is None:
        model = Seq2Seq.init(config, seed=settings.seed)
    elif model.config != config:
        raise ValueError("model: its config differs from the config given")
    test = make_test_set(settings.task, length_buckets(settings.min_len, settings.max_len),
                         per_bucket, settings.seed)
    res = train_model(model, settings, exclude=test.exclusion(), on_progress=on_progress,
                      should_stop=should_stop, experiment="train", run=config.decoder)
    if on_progress is not None:
        on_progress(ProgressEvent("train", config.decoder, "evaluate", res.steps, settings.steps,
                                  None, res.seconds))
    res.accuracy = evaluate(model, test, should_stop)
    res.interrupted = res.interrupted or len(res.accuracy) < len(test.buckets)
    if on_progress is not None:
        on_progress(ProgressEvent("train", config.decoder, "done", res.steps, settings.steps,
                                  None, res.seconds))
    return res
