"""The Transformer experiment: train a tiny encoder-decoder Transformer on the lab's tasks,
score it per length bucket like the RNNs, look at what each head learned, and show that
the same model without positional encodings cannot reverse (lecture §5–§8).

Self-attention sees its input as a set: without positions, a permutation of the source gives
the same memory up to that permutation, so nothing tells the decoder which digit came last.
The ``"no positions"`` run is the same model, data, seed and steps with the sinusoidal table
left out; only it differs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from engine._alloc import keep_freed_memory
from engine._blas import single_threaded_blas
from engine._validate import check_positive_int, check_scalar
from engine.lab.experiments import BottleneckSettings, _run_many
from engine.lab.experiments import _train_and_evaluate as train_and_evaluate
from engine.lab.heads import HeadsReport, heads_of
from engine.lab.progress import ProgressEvent, ProgressFn, StopFn
from engine.lab.tasks import VOCAB_SIZE, TestSet, bucketed_lengths, length_buckets, make_batch, make_test_set
from engine.lab.training import BucketAccuracy, LossCurve, TrainResult, TrainSettings, evaluate
from engine.seq2seq import Batch, Seq2Seq
from engine.transformer import Transformer, TransformerConfig, make_optimizer, train_step
from engine.transformer.decode import greedy_decode

RUNS = ("transformer", "no positions")


@dataclass(frozen=True)
class TransformerSettings:
    """How to build and train the lab's Transformer (and its no-positions twin).

    Attributes:
        train: task, lengths, steps, batch size, peak learning rate, final fraction of it,
            clipping, seed and the lengths a batch mixes (``teacher_forcing_ratio`` does not
            apply: a Transformer decoder is always fed the true prefix in training). Its
            ``bucket_width`` (40) is at least ``max_len − min_len``, so every batch draws each
            sequence's length from the whole range: a batch of one length band (the RNN
            lab's ±3) wastes less on padding, but the model then learns the longest lengths
            last, and it needs about 3,500 such steps for ≥ 95 % in every bucket where 2,000
            mixed ones (about 1.5× dearer each) reach 100 %.
        d_model, num_heads, d_ff, num_layers: sizes (num_layers encoder and decoder layers).
        tie_embeddings: output projection = target embedding transposed.
        scale_embeddings: multiply token embeddings by √d_model before adding the positions
            (Vaswani et al.); off by default: with N(0, 1/d) embeddings the positions then
            dominate the input, which the lab's tasks (all about order) learn faster from.
        warmup_steps: linear learning-rate warm-up before the cosine decay (to
            ``lr · lr_final``).
        label_smoothing: ε of the cross-entropy.
        dropout: p of every dropout in the model (PyTorch's places, see
            :mod:`engine.transformer.model`), 0 ≤ p < 1; training steps only, never the
            evaluation or the heads.
        dtype: ``"float32"`` (fast) or ``"float64"``.
        positions_experiment: also train the same model without positional encodings.
        per_bucket, bucket_width: held-out sequences per length bucket, bucket width.
        parallel: train the two runs in two threads (two cores).
    """

    train: TrainSettings = TrainSettings(steps=2000, batch_size=16, lr=2e-3, lr_final=0.01,
                                         max_grad_norm=1.0, bucket_width=40)
    d_model: int = 64
    num_heads: int = 2
    d_ff: int = 64
    num_layers: int = 2
    tie_embeddings: bool = False
    scale_embeddings: bool = False
    warmup_steps: int = 100
    label_smoothing: float = 0.0
    dropout: float = 0.0
    dtype: str = "float32"
    positions_experiment: bool = True
    per_bucket: int = 100
    bucket_width: int = 5
    parallel: bool = True

    def __post_init__(self) -> None:
        check_positive_int(self.num_layers, "num_layers")
        check_positive_int(self.warmup_steps, "warmup_steps", minimum=0)
        check_scalar(self.label_smoothing, "label_smoothing", low=0.0, high=1.0)
        check_positive_int(self.per_bucket, "per_bucket")
        check_positive_int(self.bucket_width, "bucket_width")
        self.model_config()                      # sizes checked by the config itself

    def model_config(self, positions: str = "sinusoidal") -> TransformerConfig:
        return TransformerConfig(vocab_size=VOCAB_SIZE, d_model=self.d_model,
                                 num_heads=self.num_heads, d_ff=self.d_ff,
                                 num_encoder_layers=self.num_layers,
                                 num_decoder_layers=self.num_layers,
                                 max_len=max(64, self.train.max_len + 2),
                                 tie_embeddings=self.tie_embeddings,
                                 scale_embeddings=self.scale_embeddings, positions=positions,
                                 dtype=self.dtype, dropout=self.dropout)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def learning_rate(settings: TransformerSettings, step: int) -> float:
    """Linear warm-up to ``lr`` over ``warmup_steps``, then cosine decay to ``lr · lr_final``."""
    tr, w = settings.train, settings.warmup_steps
    if step < w:
        return tr.lr * (step + 1) / w
    rest = tr.steps - w
    frac = (step - w) / (rest - 1) if rest > 1 else 1.0
    return tr.lr * (tr.lr_final + (1 - tr.lr_final) * 0.5 * (1 + math.cos(math.pi * frac)))


def train_transformer(model: Transformer, settings: TransformerSettings, *,
                      exclude: set[bytes] | None = None, on_progress: ProgressFn | None = None,
                      should_stop: StopFn | None = None, experiment: str = "transformer",
                      run: str = "transformer", report_every: int = 10) -> TrainResult:
    """Train ``model`` in place on fresh batches of ``settings.train.task`` (Adam, warm-up and
    cosine decay, clipping); the batches are drawn as the RNN lab draws them (its generator
    for the same seed, this experiment's lengths and ``bucket_width``), and dropout masks (the
    model's dropout > 0) come from a stream of their own."""
    tr = settings.train
    rng = np.random.default_rng([tr.seed, 104729])
    drop_rng = np.random.default_rng([tr.seed, 7919])
    opt = make_optimizer(model, lr=tr.lr, max_grad_norm=tr.max_grad_norm)
    losses: list[float] = []
    t0 = time.perf_counter()
    interrupted = False
    keep_freed_memory()                            # no page faults for every step's arrays
    with single_threaded_blas():
        for step in range(tr.steps):
            if should_stop is not None and should_stop():
                interrupted = True
                break
            opt.lr = learning_rate(settings, step)
            lens = bucketed_lengths(rng, tr.batch_size, tr.min_len, tr.max_len, tr.bucket_width)
            batch = make_batch(tr.task, lens, rng, exclude)
            loss = train_step(model, opt, batch, settings.label_smoothing, drop_rng).loss
            if not math.isfinite(loss):
                raise FloatingPointError(f"{run}: the loss became {loss} at step {step + 1}; "
                                         "try a smaller learning rate")
            losses.append(loss)
            if on_progress is not None and (step == 0 or (step + 1) % report_every == 0
                                            or step + 1 == tr.steps):   # as train_model
                on_progress(ProgressEvent(experiment, run, "train", step + 1, tr.steps,
                                          float(np.mean(losses[-report_every:])),
                                          time.perf_counter() - t0))
    return TrainResult(model, tr, LossCurve(run, tuple(losses)), len(losses),
                       time.perf_counter() - t0, interrupted)


def evaluate_transformer(model: Transformer, test_set: TestSet,
                         should_stop: StopFn | None = None) -> list[BucketAccuracy]:
    """Free-running greedy accuracy per length bucket (the RNN lab's scoring); a stop request
    (polled before each bucket) ends it there, leaving the buckets finished."""
    return evaluate(model, test_set, should_stop, decode=greedy_decode)


# ---------------------------------------------------------------------------- the experiment


@dataclass
class TransformerResult:
    """Per-bucket accuracy of every run, their curves, and the heads on one example.

    Attributes:
        settings: what was run (task, lengths and buckets; sizes unless ``config`` says otherwise).
        buckets: the length buckets (the RNN lab's for the same lengths).
        runs: ``"transformer"``, ``"no positions"`` (if asked) and, given RNN settings, the
            RNN lab's ``"attention"`` (Bahdanau) and ``"fixed"`` models on the same data.
        heads: every head of the trained Transformer on one held-out example (None if
            training was stopped before any step).
        seconds: wall time; interrupted: a stop request ended some run early.
    """

    settings: TransformerSettings
    buckets: tuple[tuple[int, int], ...]
    runs: dict[str, TrainResult]
    heads: HeadsReport | None
    seconds: float
    interrupted: bool
    config: TransformerConfig | None = None
    """The Transformer's config (the settings' unless a trained model was scored)."""

    def __post_init__(self) -> None:
        if self.config is None:
            self.config = self.settings.model_config()

    @property
    def transformer(self) -> list[BucketAccuracy]:
        return self.runs["transformer"].accuracy

    def worst_bucket(self, run: str = "transformer") -> BucketAccuracy:
        """The bucket with the lowest sequence accuracy."""
        return min(self.runs[run].accuracy, key=lambda a: a.sequence_accuracy)


def example_digits(settings: TransformerSettings, length: int | None = None) -> list[int]:
    """The example the heads are shown on: seeded digits (12 by default, within the
    training lengths), drawn from a stream the training and test sets never use."""
    tr = settings.train
    n = length if length is not None else min(max(12, tr.min_len), tr.max_len)
    rng = np.random.default_rng([tr.seed, 15485863])
    return [int(x) for x in rng.integers(0, 10, check_positive_int(n, "length"))]


def transformer(settings: TransformerSettings = TransformerSettings(), *,
                digits: Sequence[int] | None = None, rnn: BottleneckSettings | None = None,
                on_progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> TransformerResult:
    """Train the Transformer (and its no-positions twin; given ``rnn``, also that RNN
    fixed-context and Bahdanau pair, e.g. the bottleneck defaults) on the same data, score every
    run per length bucket, and measure the Transformer's heads on ``digits`` (a seeded
    example by default).

    Returns:
        :class:`TransformerResult`. Free-running greedy decoding on held-out sequences the
        training stream never produces, exactly as the bottleneck experiment scores RNNs.
    """
    tr = settings.train
    buckets = length_buckets(tr.min_len, tr.max_len, settings.bucket_width)
    test = make_test_set(tr.task, buckets, settings.per_bucket, tr.seed)
    exclude = test.exclusion()
    t0 = time.perf_counter()

    def report(run: str, res: TrainResult, phase: str, total: int) -> None:
        if on_progress is not None:
            on_progress(ProgressEvent("transformer", run, phase, res.steps, total, None,
                                      time.perf_counter() - t0))

    def job(run: str, positions: str) -> Callable[[], TrainResult]:
        def go() -> TrainResult:
            model = Transformer.init(settings.model_config(positions), seed=tr.seed)
            res = train_transformer(model, settings, exclude=exclude, on_progress=on_progress,
                                    should_stop=should_stop, run=run)
            report(run, res, "evaluate", tr.steps)
            res.accuracy = evaluate_transformer(model, test, should_stop)
            res.interrupted = res.interrupted or len(res.accuracy) < len(test.buckets)
            report(run, res, "done", tr.steps)
            return res
        return go

    jobs = {"transformer": job("transformer", "sinusoidal")}
    if settings.positions_experiment:
        jobs["no positions"] = job("no positions", "none")
    if rnn is not None:
        jobs.update(rnn_jobs(same_data(rnn, settings), test, exclude, on_progress, should_stop, t0))
    runs = _run_many(jobs, settings.parallel)
    main = runs["transformer"]
    heads = None
    if main.steps:
        ex = list(digits) if digits is not None else example_digits(settings)
        with single_threaded_blas():
            heads = heads_of(main.model, tr.task, ex)
    return TransformerResult(settings, buckets, runs, heads, time.perf_counter() - t0,
                             any(r.interrupted for r in runs.values()))


def same_data(rnn: BottleneckSettings, settings: TransformerSettings) -> BottleneckSettings:
    """``rnn`` with this experiment's task, lengths, seed and test buckets (its own sizes,
    steps, learning rate and batches' length band), so every model learns the same task on
    the same lengths from the same seed and is scored on the same test set."""
    tr = settings.train
    return replace(rnn, train=replace(rnn.train, task=tr.task, min_len=tr.min_len,
                                      max_len=tr.max_len, seed=tr.seed),
                   per_bucket=settings.per_bucket, bucket_width=settings.bucket_width)


def rnn_jobs(bs: BottleneckSettings, test: TestSet, exclude: set[bytes],
             on_progress: ProgressFn | None, should_stop: StopFn | None,
             t0: float) -> dict[str, Callable[[], TrainResult]]:
    """Training jobs for the RNN lab's Bahdanau and fixed-context models (as ``bottleneck``)."""
    def job(decoder: str) -> Callable[[], TrainResult]:
        def go() -> TrainResult:
            model = Seq2Seq.init(bs.model_config(decoder), seed=bs.train.seed)
            return train_and_evaluate(model, bs.train, test, exclude, on_progress, should_stop,
                                      "transformer", decoder, t0)
        return go

    return {"attention": job("attention"), "fixed": job("fixed")}


def score_model(model: Transformer, settings: TransformerSettings = TransformerSettings(), *,
                digits: Sequence[int] | None = None,
                should_stop: StopFn | None = None) -> TransformerResult:
    """Score a trained Transformer (e.g. a loaded one) on the test set of ``settings`` and
    measure its heads; nothing is trained (its run has 0 steps). A stop request ends the
    scoring between length buckets."""
    tr = settings.train
    t0 = time.perf_counter()
    buckets = length_buckets(tr.min_len, tr.max_len, settings.bucket_width)
    if model.config.max_len < tr.max_len + 1:
        raise ValueError(f"model: reads at most {model.config.max_len} tokens; the test set needs "
                         f"{tr.max_len + 1}")
    test = make_test_set(tr.task, buckets, settings.per_bucket, tr.seed)
    res = TrainResult(model, tr, LossCurve("transformer", ()), 0, 0.0, False)
    res.accuracy = evaluate_transformer(model, test, should_stop)
    res.interrupted = len(res.accuracy) < len(test.buckets)
    ex = list(digits) if digits is not None else example_digits(settings)
    with single_threaded_blas():
        heads = heads_of(model, tr.task, ex)
    return TransformerResult(settings, buckets, {"transformer": res}, heads,
                             time.perf_counter() - t0, res.interrupted, model.config)


def rnn_defaults() -> BottleneckSettings:
    """The RNN pair the comparison trains: the bottleneck experiment's defaults."""
    return BottleneckSettings()


def _tiny_run(settings: TransformerSettings) -> tuple[Transformer, Batch]:
    """The experiment's model at its sizes and a batch of two tiny sequences: what the
    warm-ups call each kernel once on."""
    return (Transformer.init(settings.model_config(), seed=0),
            make_batch("reverse", [1, 2], np.random.default_rng(0)))


def warm_up_training(settings: TransformerSettings = TransformerSettings()) -> float:
    """Load (on a first run: compile) the kernels of a training step with one tiny step;
    returns the seconds it took."""
    t0 = time.perf_counter()
    model, batch = _tiny_run(settings)
    with single_threaded_blas():
        train_step(model, make_optimizer(model), batch)
    return time.perf_counter() - t0


def warm_up_scoring(settings: TransformerSettings = TransformerSettings()) -> float:
    """Load the kernels the experiment scores and shows its model with (greedy decoding, the
    heads and their beam search) with one tiny call of each; returns the seconds it took."""
    t0 = time.perf_counter()
    model, batch = _tiny_run(settings)
    with single_threaded_blas():
        greedy_decode(model, batch.src, 2, batch.src_len)
        heads_of(model, "reverse", [1, 2])
    return time.perf_counter() - t0


def warm_up(settings: TransformerSettings = TransformerSettings()) -> float:
    """Load every kernel the experiment uses (:func:`warm_up_training`, then
    :func:`warm_up_scoring`); returns the seconds it took."""
    return warm_up_training(settings) + warm_up_scoring(settings)
