"""engine.lab.scaling: the exponent fit, the memory model, Var(q·k) = d_k and softmax saturation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.lab.scaling import (
    ScalingPoint,
    ScalingResult,
    doubling_sizes,
    monte_carlo_dot_variance,
    fit_exponent,
    plain_memory,
    saturation_experiment,
    scaling_experiment,
    softmax_stats,
    tiled_memory,
)


# --------------------------------------------------------------------------- exponent fit

def test_fit_recovers_an_exact_power_law():
    ns = [256, 512, 1024, 2048]
    p, c = fit_exponent(ns, [3e-9 * n**2 for n in ns])
    assert p == pytest.approx(2.0, abs=1e-12)
    assert c == pytest.approx(3e-9, rel=1e-9)


def test_fit_is_least_squares_on_logs():
    # log2 t = 1, 2, 4 at log2 n = 0, 1, 2: slope = Σ dx·dy / Σ dx² = (−1·−4/3 + 1·5/3) / 2 = 1.5
    p, _ = fit_exponent([1, 2, 4], [2.0, 4.0, 16.0])
    assert p == pytest.approx(1.5, abs=1e-12)


def test_fit_ignores_small_n_by_default():
    # a fixed 1 ms overhead dominates small n; n ≥ 1024 follows 1e-8·n² closely
    pts = [ScalingPoint(n, 1e-3 + 1e-8 * n * n, 1e-3 + 1e-8 * n * n, n * n, n)
           for n in (64, 128, 256, 512, 1024, 2048, 4096)]
    res = ScalingResult(d=8, dtype="float32", repeat=1, seed=0, threads=1, points=pts)
    assert [p.n for p in res.fit_points()] == [1024, 2048, 4096]
    exps = res.exponents()
    assert 1.9 < exps["plain_seconds"] < 2.0
    assert exps["plain_bytes"] == pytest.approx(2.0) and exps["tiled_bytes"] == pytest.approx(1.0)
    assert res.exponents(min_n=1)["plain_seconds"] < 1.6  # the overhead flattens a fit over all n


@pytest.mark.parametrize(("ns", "values", "message"), [
    ([8, 8], [1.0, 2.0], "two distinct sizes"),
    ([8, 16], [1.0, 0.0], "must be > 0"),
    ([8, 16], [1.0], "values: expected shape"),
])
def test_fit_rejects_bad_input(ns, values, message):
    with pytest.raises(ValueError, match=message):
        fit_exponent(ns, values)


def test_doubling_sizes():
    assert doubling_sizes(256, 4096) == [256, 512, 1024, 2048, 4096]
    assert doubling_sizes(3, 20) == [3, 6, 12]
    with pytest.raises(ValueError, match="max_n"):
        doubling_sizes(64, 32)


# --------------------------------------------------------------------------- memory model

def test_memory_model_by_hand():
    # plain: (n² + n·d) float32 + (n + d) float64 row buffers
    assert plain_memory(1024, 64) == (1024 * 1024 + 1024 * 64) * 4 + (1024 + 64) * 8
    # tiled, n = 1024, 2 threads, 128×512 tiles: output + transposed keys
    # + 2 × (tile + q and acc + m and l)
    assert tiled_memory(1024, 64, threads=2) == (
        1024 * 64 + 1024 * 64 + 2 * (128 * 512 + 2 * 128 * 64 + 2 * 128)) * 4
    # n smaller than a block: one task, tiles shrink to n; keys padded to a block of 128
    assert tiled_memory(100, 8, threads=4) == (100 * 8 + 128 * 8 + (100 * 100 + 2 * 100 * 8 + 2 * 100)) * 4
    # the point of the lesson: 1 GiB of weights at n = 16384, a few MiB tiled
    assert plain_memory(16384, 64) > 2**30
    assert tiled_memory(16384, 64, threads=2) < 64 * 2**20


# --------------------------------------------------------------------------- scaling experiment

def test_scaling_experiment_small_sizes_progress_and_stop():
    calls = []
    res = scaling_experiment([16, 32], d=8, repeat=1,
                             on_progress=lambda e: calls.append((e.step, e.total, e.message)))
    assert [p.n for p in res.points] == [16, 32] and not res.stopped
    assert calls[0] == (0, 3, "loading the kernels") and calls[-1] == (3, 3, "done")
    assert [p.plain_bytes for p in res.points] == [plain_memory(16, 8), plain_memory(32, 8)]
    assert all(p.plain_seconds > 0 and p.tiled_seconds > 0 for p in res.points)

    seen = []
    res = scaling_experiment([16, 32, 64], d=4, repeat=1,
                             on_progress=lambda e: seen.append(e.message), should_stop=lambda: len(seen) >= 3)
    assert res.stopped and [p.n for p in res.points] == [16]


def test_scaling_experiment_rejects_bad_arguments():
    with pytest.raises(ValueError, match="dtype"):
        scaling_experiment([16], dtype="int8")
    with pytest.raises(ValueError, match="sizes"):
        scaling_experiment([])


# --------------------------------------------------------------------------- Var(q·k) = d_k

@pytest.mark.parametrize("d_k", [1, 4, 16, 64, 256])
def test_monte_carlo_dot_variance_tracks_d_k(d_k):
    N = 20_000
    var, se = monte_carlo_dot_variance(d_k, N, np.random.default_rng([7, d_k]))
    # q·k = Σ qᵢkᵢ, terms iid with mean 0, variance 1, fourth moment E[q⁴]E[k⁴] = 9, so
    # μ₄(q·k) = 9 d + 3 d(d − 1) and Var(sample variance) ≈ (μ₄ − d²)/N = (2d² + 6d)/N
    se_hand = math.sqrt((2 * d_k**2 + 6 * d_k) / N)
    assert abs(var - d_k) < 4 * se_hand
    assert se == pytest.approx(se_hand, rel=0.15)


# --------------------------------------------------------------------------- softmax statistics

def test_softmax_stats_by_hand():
    # two equal scores: α = (½, ½), H = ln 2, Jacobian entries ±¼
    h, g, w = softmax_stats(np.array([[0.0, 0.0]]))
    assert (h, g, w) == pytest.approx((math.log(2), 0.25, 0.5))
    # scores (0, ln 3): α = (¼, ¾), H = −¼ ln ¼ − ¾ ln ¾, max entry ¼·¾ = 3/16
    h, g, w = softmax_stats(np.array([[0.0, math.log(3)]]))
    assert h == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)))
    assert g == pytest.approx(3 / 16) and w == pytest.approx(0.75)
    # a saturated softmax: all weight on one key, zero entropy and zero gradient
    h, g, w = softmax_stats(np.array([[0.0, -1e4, -1e4]]))
    assert (h, g, w) == pytest.approx((0.0, 0.0, 1.0), abs=1e-12)


def test_saturation_without_scaling_and_not_with_it():
    d_ks = [2, 8, 32, 128, 512]
    res = saturation_experiment(d_ks, n_keys=10, samples=4_000, trials=1_000, seed=3)
    pts = res.points
    assert [p.d_k for p in pts] == d_ks and [p.var_exact for p in pts] == d_ks
    h_raw = [p.entropy_unscaled for p in pts]
    h_scaled = [p.entropy_scaled for p in pts]
    g_raw = [p.grad_unscaled for p in pts]
    assert all(a > b for a, b in zip(h_raw, h_raw[1:]))          # raw entropy falls with d_k
    assert all(a > b for a, b in zip(g_raw[1:], g_raw[2:]))      # raw gradient falls from d_k = 8
    assert h_raw[-1] < 0.25 * h_raw[0] and g_raw[-1] < 0.25 * g_raw[1]
    assert all(0 < h <= math.log(10) for h in h_scaled + h_raw)
    assert all(0 < g <= 0.25 for g in g_raw + [p.grad_scaled for p in pts])
    # scaled scores have unit variance whatever d_k: the statistics stay in a narrow band
    assert max(h_scaled) - min(h_scaled) < 0.15
    assert max(p.grad_scaled for p in pts) - min(p.grad_scaled for p in pts) < 0.05
    assert pts[-1].max_weight_unscaled > 0.9 > pts[-1].max_weight_scaled


def test_saturation_is_seeded_per_d_k_and_stoppable():
    a = saturation_experiment([4, 16], samples=500, trials=50, seed=1)
    b = saturation_experiment([16], samples=500, trials=50, seed=1)
    assert a.points[1] == b.points[0]
    res = saturation_experiment([2, 4, 8], samples=100, trials=10, should_stop=lambda: True)
    assert res.stopped and res.points == []
    with pytest.raises(ValueError, match="n_keys"):
        saturation_experiment([4], n_keys=1)
