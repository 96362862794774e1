"""The lab's experiments: bottleneck, teacher forcing, alignment (lecture §2–4, §11).

Each is a pure function of its settings plus optional ``on_progress`` / ``should_stop``
callbacks, returning a result dataclass (see :mod:`engine.lab`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, replace

import numpy as np

from engine._blas import single_threaded_blas
from engine._validate import check_positive_int
from engine.lab.progress import ProgressEvent, ProgressFn, StopFn
from engine.lab.tasks import (
    DIGIT0,
    EOS,
    VOCAB_SIZE,
    _target,
    expected_alignment,
    length_buckets,
    make_test_set,
    token_labels,
)
from engine.lab.training import BucketAccuracy, LossCurve, TrainResult, TrainSettings, evaluate, train_model
from engine.seq2seq import Seq2Seq, Seq2SeqConfig, greedy_decode

# ---------------------------------------------------------------------------- bottleneck


@dataclass(frozen=True)
class BottleneckSettings:
    """Both models get the same sizes, data, steps and seed; only the decoder differs.

    The defaults reproduce the expected shape in about half a minute on two cores: attention
    ≥ 95 % token accuracy up to length 30, the fixed context far below it at 36–40 (seed 0:
    attention 98–100 % up to 30, 95 % at 31–35 and 83 % at 36–40; the fixed context 62 % at
    5–10 down to 17 % at 36–40). Twice the steps lift attention to 100 % at every length and
    the fixed context at 5–10 to 82 %, and take twice as long.
    """

    train: TrainSettings = TrainSettings(steps=600)
    hidden_dim: int = 64
    embed_dim: int = 16
    attn_dim: int = 32
    cell: str = "gru"
    bidirectional: bool = True
    per_bucket: int = 100
    bucket_width: int = 5
    parallel: bool = True

    def model_config(self, decoder: str) -> Seq2SeqConfig:
        return Seq2SeqConfig(vocab_size=VOCAB_SIZE, embed_dim=self.embed_dim,
                             hidden_dim=self.hidden_dim, attn_dim=self.attn_dim, cell=self.cell,
                             decoder=decoder, bidirectional=self.bidirectional)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class BottleneckResult:
    """Per-bucket accuracy of the two models plus their training curves."""

    settings: BottleneckSettings
    buckets: tuple[tuple[int, int], ...]
    runs: dict[str, TrainResult]
    seconds: float
    interrupted: bool

    @property
    def attention(self) -> list[BucketAccuracy]:
        return self.runs["attention"].accuracy

    @property
    def fixed(self) -> list[BucketAccuracy]:
        return self.runs["fixed"].accuracy

    def gap_at_longest(self) -> float:
        """Token accuracy of attention minus fixed context in the longest bucket."""
        return self.attention[-1].token_accuracy - self.fixed[-1].token_accuracy


def _train_and_evaluate(model: Seq2Seq, tr: TrainSettings, test, exclude: set[bytes],
                        on_progress: ProgressFn | None, should_stop: StopFn | None,
                        experiment: str, run: str, t0: float, parts: int = 1,
                        spare: Callable[[], Executor | None] | None = None) -> TrainResult:
    """Train ``model`` (``parts``, ``spare`` as in :func:`train_model`), then score it on
    ``test``, reporting "evaluate" and "done" events. A stop request ends the evaluation too
    (between length buckets)."""
    res = train_model(model, tr, exclude=exclude, on_progress=on_progress,
                      should_stop=should_stop, experiment=experiment, run=run, parts=parts,
                      spare=spare)

    def report(phase: str) -> None:
        if on_progress is not None:
            on_progress(ProgressEvent(experiment, run, phase, res.steps, tr.steps, None,
                                      time.perf_counter() - t0))

    report("evaluate")
    res.accuracy = evaluate(model, test, should_stop)
    res.interrupted = res.interrupted or len(res.accuracy) < len(test.buckets)
    report("done")
    return res


class SpareCore:
    """The core a finished training job leaves free, for the one still running.

    Called, it returns None until :meth:`free`, then a one-thread pool whose tasks run with
    BLAS on one thread (as the training loops do); pass it as ``spare`` to
    :func:`train_model` with ``parts`` > 1. Use it as a context manager (the pool's thread
    ends on exit).
    """

    def __init__(self) -> None:
        self._pool = _BlasGuardedPool(max_workers=1, thread_name_prefix="lab-spare")
        self._free = False

    def free(self) -> None:
        self._free = True

    def __call__(self) -> Executor | None:
        return self._pool if self._free else None

    def __enter__(self) -> SpareCore:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown()


class _BlasGuardedPool(ThreadPoolExecutor):
    """A thread pool whose tasks run inside :data:`engine._blas.single_threaded_blas`."""

    def submit(self, fn: Callable, /, *args: object, **kwargs: object) -> Future:
        def guarded() -> object:
            with single_threaded_blas():
                return fn(*args, **kwargs)
        return super().submit(guarded)


def _run_many(jobs: dict[str, Callable[[], TrainResult]], parallel: bool,
              spare: SpareCore | None = None) -> dict[str, TrainResult]:
    """Run training jobs one after the other, or two at a time in threads (the kernels
    release the GIL, so two models train on two cores). In threads, ``spare`` is set free
    when the first job has finished, for a job that trains with it."""
    if not parallel or len(jobs) == 1:
        return {name: job() for name, job in jobs.items()}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="lab") as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
        if spare is not None:
            wait(futures.values(), return_when=FIRST_COMPLETED)
            spare.free()
        return {name: fut.result() for name, fut in futures.items()}


def bottleneck(settings: BottleneckSettings = BottleneckSettings(), *,
               on_progress: ProgressFn | None = None,
               should_stop: StopFn | None = None) -> BottleneckResult:
    """Train a fixed-context and an attention model identically; score them by length.

    Returns:
        :class:`BottleneckResult`; its ``attention`` and ``fixed`` lists hold one
        :class:`BucketAccuracy` per length bucket (free-running greedy decoding on held-out
        sequences the training stream never produces).
    """
    tr = settings.train
    buckets = length_buckets(tr.min_len, tr.max_len, settings.bucket_width)
    test = make_test_set(tr.task, buckets, settings.per_bucket, tr.seed)
    exclude = test.exclusion()
    t0 = time.perf_counter()

    def job(decoder: str, parts: int, spare: SpareCore | None) -> Callable[[], TrainResult]:
        def run() -> TrainResult:
            model = Seq2Seq.init(settings.model_config(decoder), seed=tr.seed)
            return _train_and_evaluate(model, tr, test, exclude, on_progress, should_stop,
                                       "bottleneck", decoder, t0, parts, spare)
        return run

    # attention's steps cost about twice the fixed context's: it cuts its batches in two
    # (in both modes, so its numbers depend neither on `parallel` nor on timing), and once
    # the fixed run is done, the second halves run on the core that run leaves
    with SpareCore() as spare:
        runs = _run_many({"attention": job("attention", 2, spare),
                          "fixed": job("fixed", 1, None)}, settings.parallel, spare)
    return BottleneckResult(settings, buckets, runs, time.perf_counter() - t0,
                            any(r.interrupted for r in runs.values()))


# ---------------------------------------------------------------------------- teacher forcing


@dataclass(frozen=True)
class TeacherForcingSettings:
    """The same model, data and steps; only the teacher-forcing ratio differs."""

    train: TrainSettings = TrainSettings(min_len=5, max_len=20, steps=600)
    ratios: tuple[float, ...] = (1.0, 0.0)
    hidden_dim: int = 64
    embed_dim: int = 16
    attn_dim: int = 32
    cell: str = "gru"
    decoder: str = "attention"
    bidirectional: bool = True
    per_bucket: int = 100
    parallel: bool = True

    def model_config(self) -> Seq2SeqConfig:
        return Seq2SeqConfig(vocab_size=VOCAB_SIZE, embed_dim=self.embed_dim,
                             hidden_dim=self.hidden_dim, attn_dim=self.attn_dim, cell=self.cell,
                             decoder=self.decoder, bidirectional=self.bidirectional)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class TeacherForcingResult:
    """Loss curves and final free-running accuracy for each ratio, keyed ``"ratio 1"``..."""

    settings: TeacherForcingSettings
    runs: dict[str, TrainResult]
    seconds: float
    interrupted: bool

    def curves(self) -> list[LossCurve]:
        return [r.curve for r in self.runs.values()]


def ratio_label(ratio: float) -> str:
    return f"ratio {ratio:g}"


def teacher_forcing(settings: TeacherForcingSettings = TeacherForcingSettings(), *,
                    on_progress: ProgressFn | None = None,
                    should_stop: StopFn | None = None) -> TeacherForcingResult:
    """Train the same initial model with each teacher-forcing ratio for the same steps.

    Note the training losses measure different things: with ratio 1.0 each step is scored
    after the true history, with 0.0 after the model's own (early on, wrong) history. The
    result therefore also holds each model's free-running accuracy on held-out data.
    """
    tr = settings.train
    test = make_test_set(tr.task, length_buckets(tr.min_len, tr.max_len), settings.per_bucket, tr.seed)
    exclude = test.exclusion()
    t0 = time.perf_counter()

    def job(ratio: float) -> Callable[[], TrainResult]:
        def run() -> TrainResult:
            model = Seq2Seq.init(settings.model_config(), seed=tr.seed)
            label = ratio_label(ratio)
            return _train_and_evaluate(model, replace(tr, teacher_forcing_ratio=ratio), test,
                                       exclude, on_progress, should_stop, "teacher-forcing",
                                       label, t0)
        return run

    names = {ratio_label(r): r for r in settings.ratios}
    runs = _run_many({n: job(r) for n, r in names.items()}, settings.parallel)
    return TeacherForcingResult(settings, runs, time.perf_counter() - t0,
                                any(r.interrupted for r in runs.values()))


# ---------------------------------------------------------------------------- alignment


@dataclass(frozen=True)
class AlignmentSettings:
    """Train an attention model (unless one is given) and look at its weights."""

    train: TrainSettings = TrainSettings(min_len=5, max_len=20, steps=800)
    hidden_dim: int = 64
    embed_dim: int = 16
    attn_dim: int = 32
    cell: str = "gru"
    bidirectional: bool = True
    test_len: int = 12

    def model_config(self) -> Seq2SeqConfig:
        return Seq2SeqConfig(vocab_size=VOCAB_SIZE, embed_dim=self.embed_dim,
                             hidden_dim=self.hidden_dim, attn_dim=self.attn_dim, cell=self.cell,
                             decoder="attention", bidirectional=self.bidirectional)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class AlignmentResult:
    """Attention weights α (T_out, S) of one test sequence with labels.

    Attributes:
        weights: row t = output step t (the token emitted), column i = source position i.
        row_labels: the tokens the model emitted; col_labels: the source tokens.
        target: the correct output tokens.
        expected: for each output row, the source column the task aligns it with
            (None where the task has no single answer, e.g. repeated digits when sorting).
        argmax_match: fraction of rows (with an expected column) whose largest weight sits
            on it — for reversal, the anti-diagonal.
        argmax_near: the same, within one column of it (a bidirectional encoder's
            neighbouring annotations also carry the digit, and models often use them).
        mass_on_expected: mean weight on the expected column.
        correct: the output equals the target.
        training: the training run (None when a trained model was given).
    """

    task: str
    weights: np.ndarray
    row_labels: list[str]
    col_labels: list[str]
    target: list[str]
    expected: list[int | None]
    argmax_match: float
    argmax_near: float
    mass_on_expected: float
    correct: bool
    training: TrainResult | None = None


def alignment_of(model: Seq2Seq, task: str, digits: Sequence[int]) -> AlignmentResult:
    """Greedy-decode one sequence and measure its attention against the task's alignment."""
    if model.config.decoder != "attention":
        raise ValueError("model: alignment needs an attention model; this one has a fixed context")
    d = np.asarray(digits, np.int64)
    if d.ndim != 1 or d.size == 0 or d.min() < 0 or d.max() > 9:
        raise ValueError(f"digits: expected a non-empty list of digits 0-9, got {list(digits)}")
    L = d.size
    src = np.concatenate([d + DIGIT0, [EOS]])
    tgt = np.concatenate([_target(task, d) + DIGIT0, [EOS]])
    with single_threaded_blas():
        pred, alpha = greedy_decode(model, src[None, :], L + 1, keep_attention=True)
    if alpha is None:
        raise RuntimeError("greedy_decode kept no attention weights")
    W = alpha[0]                                    # (L+1, L+1)
    expected = expected_alignment(task, d)
    rows = [(t, c) for t, c in enumerate(expected) if c is not None]
    nan = float("nan")
    match = float(np.mean([np.argmax(W[t]) == c for t, c in rows])) if rows else nan
    near = float(np.mean([abs(int(np.argmax(W[t])) - c) <= 1 for t, c in rows])) if rows else nan
    mass = float(np.mean([W[t, c] for t, c in rows])) if rows else nan
    return AlignmentResult(task, W, token_labels(pred[0]), token_labels(src), token_labels(tgt),
                           expected, match, near, mass, bool(np.array_equal(pred[0], tgt)))


def alignment(settings: AlignmentSettings = AlignmentSettings(), model: Seq2Seq | None = None,
              digits: Sequence[int] | None = None, *, on_progress: ProgressFn | None = None,
              should_stop: StopFn | None = None) -> AlignmentResult:
    """Train an attention model on ``settings.train.task`` (or use ``model``) and return
    its attention weights on one held-out test sequence of ``settings.test_len`` digits
    (or on ``digits``)."""
    tr = settings.train
    training = None
    if model is None:
        model = Seq2Seq.init(settings.model_config(), seed=tr.seed)
        training = train_model(model, tr, on_progress=on_progress, should_stop=should_stop,
                               experiment="alignment", run="attention")
    if digits is None:
        rng = np.random.default_rng([tr.seed, 15485863])
        shown = rng.integers(0, 10, check_positive_int(settings.test_len, "test_len")).tolist()
    else:
        shown = list(digits)
    res = alignment_of(model, tr.task, shown)
    res.training = training
    if on_progress is not None:
        steps = training.steps if training else 0
        on_progress(ProgressEvent("alignment", "attention", "done", steps, tr.steps, None,
                                  training.seconds if training else 0.0))
    return res
