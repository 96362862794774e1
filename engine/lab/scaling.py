"""The scaling and saturation labs: how attention's cost grows with n, and why 1/√d_k.

Two experiments, as plain functions (no printing; the CLI and the TUI render the results):

- :func:`scaling_experiment` times plain attention (``engine.attention``, which builds the
  n×n weight matrix) and the tiled kernel (``engine.flash``, online softmax, no n×n matrix)
  as n doubles, and fits the exponent p of t ≈ c·nᵖ by least squares on log t vs log n.
  Both do Θ(n² d) work, so both exponents approach 2; their memory differs: Θ(n²) vs Θ(n).
  Memory here is *computed* from the buffers each kernel allocates (deterministic, what the
  lesson is about); ``benchmarks/attention.py`` measures the real resident memory.
- :func:`saturation_experiment` checks the lecture's argument for the 1/√d_k in
  softmax(Q Kᵀ / √d_k) (Vaswani et al., 2017, §3.2.1 footnote 4): with q, k of independent
  unit-variance components, Var(q·k) = d_k. Unscaled scores grow like √d_k, the softmax
  saturates (entropy → 0) and its Jacobian diag(α) − ααᵀ vanishes, so gradients die; scaled
  scores keep unit variance for every d_k.

Both take the lab's ``on_progress(ProgressEvent)`` and ``should_stop()`` callbacks
(:mod:`engine.lab.progress`; phase ``"measure"``, ``step`` = points measured, ``message`` =
the point being measured); a stop returns the points finished so far with ``stopped=True``.
:func:`scaling` and :func:`saturation` take their settings as one object, like the training
experiments.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import TypeVar

import numpy as np

from engine._validate import as_float, check_positive_int
from engine.lab.progress import ProgressEvent, ProgressFn, StopFn
from engine.softmax import softmax

FIT_MIN_N = 1024  # exponents are fitted on n ≥ this (when at least two such points exist)


# --------------------------------------------------------------------------- fitting

def fit_exponent(ns: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of log v = p·log n + log c; returns (p, c).

    Args:
        ns: sizes, (m,) with m ≥ 2 distinct positive values.
        values: measured times or bytes, (m,), positive.

    Raises:
        ValueError: fewer than two distinct sizes, or a non-positive value.
    """
    x = as_float(ns, "ns", ndim=1)
    y = as_float(values, "values", shape=(x.shape[0],))
    if np.unique(x).size < 2:
        raise ValueError(f"ns: need at least two distinct sizes to fit an exponent, got {x.tolist()}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("ns, values: sizes and values must be > 0 to take logarithms")
    lx, ly = np.log(x), np.log(y)
    dx = lx - lx.mean()
    p = float(np.dot(dx, ly - ly.mean()) / np.dot(dx, dx))  # slope = cov / var
    return p, float(math.exp(ly.mean() - p * lx.mean()))


# --------------------------------------------------------------------------- memory model

def plain_memory(n: int, d: int, itemsize: int = 4) -> int:
    """Bytes plain attention allocates for one head: the (n, n) weights and the (n, d) output.

    Plus two float64 row buffers of its kernel, (n,) and (d,).
    """
    return (n * n + n * d) * itemsize + (n + d) * 8


def tiled_memory(n: int, d: int, itemsize: int = 4, *, threads: int = 1,
                 block_q: int = 128, block_k: int = 512, key_block: int = 128) -> int:
    """Bytes the tiled kernel allocates for one head: the (n, d) output, the keys copied into
    transposed blocks of ``key_block`` (⌈n / 128⌉·128·d values), and per running thread (at
    most ``threads``, at most one per query block) a (B_q, B_k) score tile, the (B_q, d)
    scaled queries, the (B_q, d) accumulator and two (B_q,) running statistics."""
    bq, bk = min(n, block_q), min(n, block_k)
    tasks = min(threads, -(-n // block_q))
    keys = -(-n // key_block) * key_block * d
    return (n * d + keys + tasks * (bq * bk + 2 * bq * d + 2 * bq)) * itemsize


# --------------------------------------------------------------------------- scaling

@dataclass(frozen=True)
class ScalingPoint:
    """One sequence length: seconds per call (best of ``repeat``) and working memory in bytes."""

    n: int
    plain_seconds: float
    tiled_seconds: float
    plain_bytes: int
    tiled_bytes: int


@dataclass(frozen=True)
class ScalingResult:
    d: int
    dtype: str
    repeat: int
    seed: int
    threads: int
    points: list[ScalingPoint] = field(default_factory=list)
    stopped: bool = False
    blocks: tuple[int, int] = (128, 512)
    """The tiled kernel's (B_q, B_k) during the run (``engine.flash.get_blocks``)."""

    def fit_points(self, min_n: int | None = None) -> list[ScalingPoint]:
        """The points an exponent is fitted on: n ≥ ``min_n`` (default :data:`FIT_MIN_N`),
        or all points when fewer than two are that large. Small n is dominated by fixed
        costs (a call, a thread launch), not by the n² work the exponent is about."""
        cut = FIT_MIN_N if min_n is None else min_n
        big = [p for p in self.points if p.n >= cut]
        return big if len(big) >= 2 else list(self.points)

    def exponents(self, min_n: int | None = None) -> dict[str, float | None]:
        """Fitted exponents p of v ≈ c·nᵖ for time and memory (None with < 2 points)."""
        pts = self.fit_points(min_n)
        ns = [p.n for p in pts]
        out: dict[str, float | None] = {}
        for key in ("plain_seconds", "tiled_seconds", "plain_bytes", "tiled_bytes"):
            vals = [getattr(p, key) for p in pts]
            ok = len(set(ns)) >= 2 and all(v > 0 for v in vals)
            out[key] = fit_exponent(ns, vals)[0] if ok else None
        return out


def doubling_sizes(min_n: int, max_n: int, names: tuple[str, str] = ("min_n", "max_n")) -> list[int]:
    """min_n, 2·min_n, 4·min_n, … up to max_n (inclusive); ``names`` label the errors."""
    lo = check_positive_int(min_n, names[0])
    hi = check_positive_int(max_n, names[1])
    if hi < lo:
        raise ValueError(f"{names[1]}: expected ≥ {names[0]} = {lo}, got {hi}")
    sizes = []
    while lo <= hi:
        sizes.append(lo)
        lo *= 2
    return sizes


R = TypeVar("R")
"""What the timed call returns."""


def _best_seconds(fn: Callable[[], R], repeat: int, clock: Callable[[], float],
                  should_stop: StopFn | None = None) -> tuple[float, R] | None:
    """Fastest of ``repeat`` calls (other programs only ever add time, so the minimum is the
    steadiest estimate of the kernel's own cost) and the last call's result; None when
    ``should_stop`` (polled between calls) asked to stop."""
    t0 = clock()
    out = fn()
    best = clock() - t0
    for _ in range(1, repeat):
        if should_stop is not None and should_stop():
            return None
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
    return best, out


def scaling_experiment(
    sizes: Sequence[int] = (256, 512, 1024, 2048, 4096),
    d: int = 64,
    *,
    seed: int = 0,
    repeat: int = 3,
    dtype: str = "float32",
    on_progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> ScalingResult:
    """Time plain vs tiled attention (one head, L = S = n) for each n in ``sizes``.

    Args:
        sizes: sequence lengths, increasing (e.g. from :func:`doubling_sizes`).
        d: d_k = d_v.
        seed: seeds Q, K, V (standard normal) for every n.
        repeat: calls per kernel and n; the fastest is kept.
        dtype: "float32" or "float64".
        on_progress: called with a :class:`ProgressEvent` before each point (``step`` =
            points done, ``message`` = what comes next) and once at the end.
        should_stop: polled between steps; True stops early (``stopped=True``).
        clock: seconds as a float (injectable for tests).

    Returns:
        A :class:`ScalingResult` with one :class:`ScalingPoint` per finished n.

    Raises:
        ValueError: on bad sizes, d, repeat or dtype, or if the two kernels disagree.
    """
    from engine.attention import attention
    from engine.flash import flash_attention, get_blocks, get_pieces, get_threads

    ns = [check_positive_int(n, "sizes") for n in sizes]
    if not ns:
        raise ValueError("sizes: expected at least one sequence length, got none")
    d = check_positive_int(d, "d")
    repeat = check_positive_int(repeat, "repeat")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype: expected 'float32' or 'float64', got {dtype!r}")
    dt = np.dtype(dtype)
    threads = get_threads()
    block_q, block_k = get_blocks()
    result = ScalingResult(d=d, dtype=dtype, repeat=repeat, seed=seed, threads=threads,
                           blocks=(block_q, block_k))
    total = len(ns) + 1
    report = _reporter("scaling", total, on_progress, clock)

    def step(done: int, message: str) -> bool:
        report(done, message)
        return bool(should_stop and should_stop())

    if step(0, "loading the kernels"):
        return _stopped(result)
    warm = np.ones((4, d), dt)
    attention(warm, warm, warm)
    flash_attention(warm, warm, warm)
    for i, n in enumerate(ns):
        if step(i + 1, f"n = {n}"):
            return _stopped(result)
        rng = np.random.default_rng([seed, n])
        Q, K, V = (rng.standard_normal((n, d)).astype(dt) for _ in range(3))
        plain = _best_seconds(partial(attention, Q, K, V), repeat, clock, should_stop)
        if plain is None or (should_stop and should_stop()):
            return _stopped(result)
        tiled = _best_seconds(partial(flash_attention, Q, K, V), repeat, clock, should_stop)
        if tiled is None:
            return _stopped(result)
        (t_plain, (out_plain, _)), (t_tiled, out_tiled) = plain, tiled
        tol = 1e-4 if dt == np.float32 else 1e-10
        if not np.allclose(out_plain, out_tiled, rtol=0, atol=tol):
            raise ValueError(f"plain and tiled attention disagree at n = {n}")
        result.points.append(ScalingPoint(
            n=n, plain_seconds=t_plain, tiled_seconds=t_tiled,
            plain_bytes=plain_memory(n, d, dt.itemsize),
            tiled_bytes=tiled_memory(n, d, dt.itemsize, threads=threads, block_q=block_q,
                                     block_k=block_k, key_block=get_pieces()[1])))
    step(total, "done")
    return result


def _stopped(result):
    return replace(result, stopped=True)


def _reporter(experiment: str, total: int, on_progress: ProgressFn | None,
              clock: Callable[[], float] = time.perf_counter) -> Callable[[int, str], None]:
    """``report(done, message)`` sending a measurement's :class:`ProgressEvent`."""
    t0 = clock()

    def report(done: int, message: str) -> None:
        if on_progress is not None:
            phase = "done" if message == "done" else "measure"
            on_progress(ProgressEvent(experiment, experiment, phase, done, total,
                                      elapsed=clock() - t0, message=message))

    return report


# --------------------------------------------------------------------------- saturation

@dataclass(frozen=True)
class SaturationPoint:
    """One d_k: Monte Carlo Var(q·k) (exact value d_k) and softmax statistics.

    Entropies are in nats (the maximum is ln n_keys); ``*_grad`` is the mean over trials of
    max |∂α_i/∂s_j| = max |diag(α) − ααᵀ| (at most 1/4, reached by two keys sharing the
    weight evenly).
    """

    d_k: int
    var_mc: float
    var_se: float
    var_exact: float
    entropy_scaled: float
    entropy_unscaled: float
    grad_scaled: float
    grad_unscaled: float
    max_weight_scaled: float
    max_weight_unscaled: float


@dataclass(frozen=True)
class SaturationResult:
    n_keys: int
    samples: int
    trials: int
    seed: int
    points: list[SaturationPoint] = field(default_factory=list)
    stopped: bool = False


def monte_carlo_dot_variance(d_k: int, samples: int, rng: np.random.Generator) -> tuple[float, float]:
    """Monte Carlo Var(q·k) for q, k with independent N(0, 1) components, and its standard
    error sqrt((m₄ − s⁴) / N) from the sample's fourth central moment m₄."""
    q = rng.standard_normal((samples, d_k))           # (N, d_k)
    k = rng.standard_normal((samples, d_k))           # (N, d_k)
    x = np.einsum("ij,ij->i", q, k)                   # (N,) samples of q·k
    c = x - x.mean()
    var = float(np.mean(c * c) * samples / (samples - 1))
    m4 = float(np.mean(c ** 4))
    return var, math.sqrt(max(m4 - var * var, 0.0) / samples)


def softmax_stats(scores: np.ndarray) -> tuple[float, float, float]:
    """Mean entropy (nats), mean max |Jacobian entry| and mean largest weight over rows.

    Args:
        scores: (trials, n_keys), one softmax per row.
    """
    a = softmax(scores, axis=-1)                      # (T, n) weights α
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.sum(np.where(a > 0, a * np.log(a), 0.0), axis=-1)
    # Jacobian ∂α_i/∂s_j = α_i (δ_ij − α_j): diagonal α_i(1 − α_i), off-diagonal −α_i α_j
    diag = a * (1.0 - a)                              # (T, n)
    srt = np.sort(a, axis=-1)
    off = srt[:, -1] * srt[:, -2] if a.shape[1] > 1 else np.zeros(a.shape[0])
    grad = np.maximum(diag.max(axis=-1), off)
    return float(ent.mean()), float(grad.mean()), float(a.max(axis=-1).mean())


def saturation_experiment(
    d_ks: Sequence[int] = (2, 4, 8, 16, 32, 64, 128, 256, 512),
    *,
    n_keys: int = 10,
    samples: int = 20_000,
    trials: int = 2_000,
    seed: int = 0,
    on_progress: ProgressFn | None = None,
    should_stop: StopFn | None = None,
) -> SaturationResult:
    """Var(q·k) against d_k, and softmax saturation with and without 1/√d_k.

    For each d_k: ``samples`` pairs (q, k) for the variance; ``trials`` queries, each against
    ``n_keys`` keys, for the softmax statistics of s_j = q·k_j and s_j = q·k_j / √d_k. Every
    d_k draws from its own generator seeded by (seed, d_k), so a point does not depend on
    which other d_k are in the list.

    Raises:
        ValueError: on a non-positive d_k, n_keys < 2, samples < 2 or trials < 1.
    """
    dks = [check_positive_int(v, "d_ks") for v in d_ks]
    if not dks:
        raise ValueError("d_ks: expected at least one d_k, got none")
    n_keys = check_positive_int(n_keys, "n_keys", minimum=2)
    samples = check_positive_int(samples, "samples", minimum=2)
    trials = check_positive_int(trials, "trials")
    result = SaturationResult(n_keys=n_keys, samples=samples, trials=trials, seed=seed)
    report = _reporter("saturation", len(dks), on_progress)
    for i, d_k in enumerate(dks):
        report(i, f"d_k = {d_k}")
        if should_stop and should_stop():
            return _stopped(result)
        rng = np.random.default_rng([seed, d_k])
        var, se = monte_carlo_dot_variance(d_k, samples, rng)
        q = rng.standard_normal((trials, 1, d_k))     # (T, 1, d_k)
        k = rng.standard_normal((trials, n_keys, d_k))  # (T, n, d_k)
        s = np.einsum("tid,tjd->tj", q, k)             # (T, n) unscaled scores q·k_j
        h_s, g_s, w_s = softmax_stats(s / math.sqrt(d_k))
        h_u, g_u, w_u = softmax_stats(s)
        result.points.append(SaturationPoint(
            d_k=d_k, var_mc=var, var_se=se, var_exact=float(d_k),
            entropy_scaled=h_s, entropy_unscaled=h_u, grad_scaled=g_s, grad_unscaled=g_u,
            max_weight_scaled=w_s, max_weight_unscaled=w_u))
    report(len(dks), "done")
    return result


# --------------------------------------------------------------------------- one settings object

@dataclass(frozen=True)
class ScalingSettings:
    """The arguments of :func:`scaling_experiment` as one object (defaults: its defaults)."""

    sizes: tuple[int, ...] = (256, 512, 1024, 2048, 4096)
    d: int = 64
    seed: int = 0
    repeat: int = 3
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class SaturationSettings:
    """The arguments of :func:`saturation_experiment` as one object."""

    d_ks: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256, 512)
    n_keys: int = 10
    samples: int = 20_000
    trials: int = 2_000
    seed: int = 0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def scaling(settings: ScalingSettings = ScalingSettings(), *, on_progress: ProgressFn | None = None,
            should_stop: StopFn | None = None) -> ScalingResult:
    """:func:`scaling_experiment` with its settings as one object."""
    s = settings
    return scaling_experiment(s.sizes, s.d, seed=s.seed, repeat=s.repeat, dtype=s.dtype,
                              on_progress=on_progress, should_stop=should_stop)


def saturation(settings: SaturationSettings = SaturationSettings(), *,
               on_progress: ProgressFn | None = None,
               should_stop: StopFn | None = None) -> SaturationResult:
    """:func:`saturation_experiment` with its settings as one object."""
    s = settings
    return saturation_experiment(s.d_ks, n_keys=s.n_keys, samples=s.samples, trials=s.trials,
                                 seed=s.seed, on_progress=on_progress, should_stop=should_stop)
