"""The lab: toy tasks and the experiments behind ``attn-tutor lab`` (lecture §2–4, §11–12).

Three claims of the notes, tested on the student's machine with the numba seq2seq of
:mod:`engine.seq2seq`:

- ``bottleneck``: a fixed context vector fails on long inputs while attention does not
  (Bahdanau et al. 2014, Fig. 2). Both models are trained identically on the same task and
  scored per length bucket with free-running greedy decoding on held-out sequences.
- ``teacher_forcing``: the same model trained with teacher-forcing ratio 1.0 and 0.0.
- ``alignment``: the learned attention weights of a trained model on a test sequence;
  for reversal the mass lies on the anti-diagonal.
- ``train``: one model, any task, sizes, cell, decoder and ratio.

Experiments are pure functions: they take settings, ``on_progress(ProgressEvent)`` and
``should_stop() -> bool`` callbacks (both optional; ``on_progress`` may be called from a
worker thread), and return result dataclasses. A stop request ends training early; the
result then says ``interrupted=True`` and holds what was done so far. Nothing here prints.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from engine._validate import check_choice, check_positive_int, check_scalar
from engine.seq2seq import Adam, Batch, Seq2Seq, Seq2SeqConfig, greedy_decode, train_step

# ---------------------------------------------------------------------------- vocabulary

PAD, BOS, EOS = 0, 1, 2
DIGIT0 = 3
TOKENS: tuple[str, ...] = ("<pad>", "<s>", "</s>") + tuple(str(i) for i in range(10))
VOCAB_SIZE = len(TOKENS)
TASKS = ("reverse", "copy", "sort")
TASK_HELP = {
    "reverse": "write the digits in reverse order (alignment: the anti-diagonal)",
    "copy": "write the digits unchanged (alignment: the diagonal)",
    "sort": "write the digits in ascending order (alignment: by value)",
}


def token_labels(tokens: Sequence[int]) -> list[str]:
    """Printable labels for token ids (``"7"``, ``"</s>"``)."""
    return [TOKENS[int(t)] for t in tokens]


def _target(task: str, digits: np.ndarray) -> np.ndarray:
    if task == "reverse":
        return digits[::-1]
    if task == "copy":
        return digits
    return np.sort(digits, kind="stable")


def make_batch(task: str, lengths: Sequence[int] | np.ndarray, rng: np.random.Generator,
               exclude: set[bytes] | None = None) -> Batch:
    """A padded batch of the task: for each length L, L random digits then EOS.

    Args:
        task: one of :data:`TASKS`.
        lengths: digits per sequence (≥ 1).
        rng: the Generator the digits come from.
        exclude: digit strings (``bytes`` of the 0–9 values) that must not appear — the
            held-out test set; a clash is redrawn.

    Returns:
        Batch with src (B, S) = digits + EOS, tgt (B, S) = task(digits) + EOS, both padded
        with PAD, and src_len = tgt_len = L + 1.
    """
    check_choice(task, "task", TASKS)
    lens = np.asarray(lengths, dtype=np.int64)
    if lens.ndim != 1 or lens.size == 0 or lens.min() < 1:
        raise ValueError(f"lengths: expected a non-empty list of lengths >= 1, got {lens.tolist()}")
    B, S = lens.size, int(lens.max()) + 1
    src = np.zeros((B, S), np.int64)
    tgt = np.zeros((B, S), np.int64)
    for b, L in enumerate(lens):
        digits = rng.integers(0, 10, int(L))
        tries = 0
        while exclude is not None and digits.astype(np.uint8).tobytes() in exclude:
            tries += 1
            if tries > 200:
                raise ValueError(f"lengths: (almost) every sequence of {L} digits is held out "
                                 "for testing; train on longer sequences")
            digits = rng.integers(0, 10, int(L))
        src[b, :L] = digits + DIGIT0
        src[b, L] = EOS
        tgt[b, :L] = _target(task, digits) + DIGIT0
        tgt[b, L] = EOS
    return Batch(src, lens + 1, tgt, lens + 1)


def bucketed_lengths(rng: np.random.Generator, batch_size: int, min_len: int, max_len: int,
                     width: int) -> np.ndarray:
    """Lengths for one batch: a centre drawn uniformly from [min_len, max_len], then each
    length uniformly within ±width of it (clipped), so a batch wastes little on padding."""
    c = int(rng.integers(min_len, max_len + 1))
    lo, hi = max(min_len, c - width), min(max_len, c + width)
    return rng.integers(lo, hi + 1, batch_size)


@dataclass(frozen=True)
class TestSet:
    """Held-out sequences grouped by length bucket (one batch per bucket)."""

    task: str
    buckets: tuple[tuple[int, int], ...]
    batches: tuple[Batch, ...]

    def exclusion(self) -> set[bytes]:
        out: set[bytes] = set()
        for batch in self.batches:
            for b in range(batch.size):
                L = int(batch.src_len[b]) - 1
                out.add((batch.src[b, :L] - DIGIT0).astype(np.uint8).tobytes())
        return out


def length_buckets(min_len: int, max_len: int, width: int = 5) -> tuple[tuple[int, int], ...]:
    """Buckets [lo, hi] covering min_len..max_len: the first up to the next multiple of
    ``width`` (5–10), then ``width`` wide (11–15, 16–20, ...)."""
    out = []
    lo = min_len
    hi = max(((min_len + width - 1) // width) * width, min_len)
    if hi - lo < width - 1:
        hi = min(hi + width, max_len)
    while lo <= max_len:
        hi = min(hi, max_len)
        out.append((lo, hi))
        lo, hi = hi + 1, hi + width
    return tuple(out)


def make_test_set(task: str, buckets: Sequence[tuple[int, int]], per_bucket: int,
                  seed: int) -> TestSet:
    """``per_bucket`` sequences per bucket, lengths spread evenly over the bucket."""
    rng = np.random.default_rng([seed, 7919])      # its own stream: never the training one
    batches = []
    for lo, hi in buckets:
        lens = lo + (np.arange(per_bucket) % (hi - lo + 1))
        batches.append(make_batch(task, lens, rng))
    return TestSet(task, tuple((int(a), int(b)) for a, b in buckets), tuple(batches))


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ProgressEvent:
    """A progress report from a running experiment.

    Attributes:
        experiment: ``"bottleneck"``, ``"teacher-forcing"``, ``"alignment"`` or ``"train"``.
        run: which model (``"attention"``, ``"fixed"``, ``"ratio 1.0"``, ...).
        phase: ``"train"``, ``"evaluate"`` or ``"done"``.
        step: training steps done (of ``total``).
        total: training steps planned.
        loss: mean cross-entropy per target token over the last few steps (None if none).
        elapsed: seconds since this run started.
    """

    experiment: str
    run: str
    phase: str
    step: int
    total: int
    loss: float | None
    elapsed: float


ProgressFn = Callable[[ProgressEvent], None]
StopFn = Callable[[], bool]


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


@dataclass
class TrainResult:
    """A trained model with its history.

    Attributes:
        model: the model (trained in place from its initialisation).
        settings: the training settings used.
        curve: loss per target token at each step.
        steps: steps completed (< settings.steps if interrupted).
        seconds: wall time of the training loop.
        interrupted: True when ``should_stop`` ended it early.
        accuracy: per-bucket accuracy on held-out data (empty if not evaluated).
    """

    model: Seq2Seq
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
                report_every: int = 10) -> TrainResult:
    """Train ``model`` in place with Adam on freshly generated batches of ``settings.task``.

    Args:
        model: the model to train (e.g. ``Seq2Seq.init(config, seed)``).
        settings: see :class:`TrainSettings`.
        exclude: held-out digit strings never to train on.
        on_progress: called every ``report_every`` steps and at the end.
        should_stop: polled every step; True stops training (the result is marked).
        experiment, run: labels copied into the progress events.

    Returns:
        :class:`TrainResult` (no evaluation; see :func:`evaluate`).
    """
    rng = np.random.default_rng([settings.seed, 104729])
    opt = Adam(model.config.n_params, lr=settings.lr, max_grad_norm=settings.max_grad_norm)
    losses: list[float] = []
    t0 = time.perf_counter()
    interrupted = False
    with _single_threaded_blas():
        for step in range(settings.steps):
            if should_stop is not None and should_stop():
                interrupted = True
                break
            opt.lr = learning_rate(settings, step)
            lens = bucketed_lengths(rng, settings.batch_size, settings.min_len, settings.max_len,
                                    settings.bucket_width)
            batch = make_batch(settings.task, lens, rng, exclude)
            res = train_step(model, opt, batch, settings.teacher_forcing_ratio, rng)
            loss = res.loss * batch.size / batch.n_tokens
            if not math.isfinite(loss):
                raise FloatingPointError(f"{run}: the loss became {loss} at step {step + 1}; "
                                         "try a smaller learning rate")
            losses.append(loss)
            if on_progress is not None and ((step + 1) % report_every == 0 or step + 1 == settings.steps):
                on_progress(ProgressEvent(experiment, run, "train", step + 1, settings.steps,
                                          float(np.mean(losses[-report_every:])),
                                          time.perf_counter() - t0))
    seconds = time.perf_counter() - t0
    return TrainResult(model, settings, LossCurve(run, tuple(losses)), len(losses), seconds,
                       interrupted)


class _SingleThreadedBlas:
    """Keep BLAS on one thread while the lab trains or decodes (reference-counted).

    The kernels' matrix products are small (32×192); OpenBLAS threads only add
    synchronisation and oversubscribe the cores when two models train at once. scipy's
    OpenBLAS (the one numba's ``np.dot`` calls) must be loaded before threadpoolctl looks
    for libraries, or the limit silently misses it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._controller = None
        self._limiter = None

    def __call__(self) -> _SingleThreadedBlas:
        return self

    def __enter__(self) -> None:
        with self._lock:
            if self._controller is None:
                import scipy.linalg.cython_blas  # noqa: F401 - the BLAS the kernels call
                from threadpoolctl import ThreadpoolController

                self._controller = ThreadpoolController()
            if self._depth == 0:
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._limiter is not None:
                self._limiter.restore_original_limits()
                self._limiter = None


_single_threaded_blas = _SingleThreadedBlas()


def evaluate(model: Seq2Seq, test_set: TestSet) -> list[BucketAccuracy]:
    """Free-running greedy decoding of every held-out sequence; accuracy per bucket."""
    out = []
    with _single_threaded_blas():
        for (lo, hi), batch in zip(test_set.buckets, test_set.batches):
            T = batch.tgt.shape[1]
            pred, _ = greedy_decode(model, batch.src, T, batch.src_len)
            digits = correct = whole = 0
            for b in range(batch.size):
                L = int(batch.tgt_len[b])              # digits + EOS
                hit = pred[b, :L] == batch.tgt[b, :L]
                digits += L - 1
                correct += int(hit[:L - 1].sum())
                whole += int(hit.all())
            out.append(BucketAccuracy(lo, hi, batch.size, correct / digits, whole / batch.size))
    return out


# ---------------------------------------------------------------------------- bottleneck


@dataclass(frozen=True)
class BottleneckSettings:
    """Both models get the same sizes, data, steps and seed; only the decoder differs.

    The defaults reproduce the expected shape in under a minute on two cores: attention
    ≥ 95 % token accuracy up to length 30, the fixed context far below it at 36–40.
    """

    train: TrainSettings = TrainSettings(steps=1500)
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


def _run_many(jobs: dict[str, Callable[[], TrainResult]], parallel: bool) -> dict[str, TrainResult]:
    """Run training jobs one after the other, or two at a time in threads (the kernels
    release the GIL, so two models train on two cores)."""
    if not parallel or len(jobs) == 1:
        return {name: job() for name, job in jobs.items()}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="lab") as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
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

    def job(decoder: str) -> Callable[[], TrainResult]:
        def run() -> TrainResult:
            model = Seq2Seq.init(settings.model_config(decoder), seed=tr.seed)
            res = train_model(model, tr, exclude=exclude, on_progress=on_progress,
                              should_stop=should_stop, experiment="bottleneck", run=decoder)
            if on_progress is not None:
                on_progress(ProgressEvent("bottleneck", decoder, "evaluate", res.steps, tr.steps,
                                          None, time.perf_counter() - t0))
            res.accuracy = evaluate(model, test)
            if on_progress is not None:
                on_progress(ProgressEvent("bottleneck", decoder, "done", res.steps, tr.steps,
                                          None, time.perf_counter() - t0))
            return res
        return run

    runs = _run_many({"attention": job("attention"), "fixed": job("fixed")}, settings.parallel)
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
            res = train_model(model, replace(tr, teacher_forcing_ratio=ratio), exclude=exclude,
                              on_progress=on_progress, should_stop=should_stop,
                              experiment="teacher-forcing", run=label)
            res.accuracy = evaluate(model, test)
            if on_progress is not None:
                on_progress(ProgressEvent("teacher-forcing", label, "done", res.steps, tr.steps,
                                          None, time.perf_counter() - t0))
            return res
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


def expected_alignment(task: str, digits: np.ndarray) -> list[int | None]:
    """For each output position (digits, then EOS), the source column holding the digit
    written there: reverse → L-1-t (the anti-diagonal), copy → t (the diagonal), sort → the
    digit's position when its value is unique. None where the task names no single column
    (a repeated digit when sorting; the final EOS)."""
    L = len(digits)
    if task == "reverse":
        cols: list[int | None] = [L - 1 - t for t in range(L)]
    elif task == "copy":
        cols = list(range(L))
    else:  # sort: the source position of each sorted digit when that value is unique
        order = np.argsort(digits, kind="stable")
        counts = np.bincount(digits, minlength=10)
        cols = [int(i) if counts[digits[i]] == 1 else None for i in order]
    return cols + [None]                            # EOS: the task names no source position


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
    with _single_threaded_blas():
        pred, alpha = greedy_decode(model, src[None, :], L + 1, keep_attention=True)
    W = alpha[0]                                    # (L+1, L+1)
    expected = expected_alignment(task, d)
    rows = [t for t, c in enumerate(expected) if c is not None]
    nan = float("nan")
    match = float(np.mean([np.argmax(W[t]) == expected[t] for t in rows])) if rows else nan
    near = float(np.mean([abs(int(np.argmax(W[t])) - expected[t]) <= 1 for t in rows])) if rows else nan
    mass = float(np.mean([W[t, expected[t]] for t in rows])) if rows else nan
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
        digits = rng.integers(0, 10, check_positive_int(settings.test_len, "test_len"))
    res = alignment_of(model, tr.task, digits)
    res.training = training
    if on_progress is not None:
        steps = training.steps if training else 0
        on_progress(ProgressEvent("alignment", "attention", "done", steps, tr.steps, None,
                                  training.seconds if training else 0.0))
    return res


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
    res.accuracy = evaluate(model, test)
    return res
