"""Temperature, top-k and nucleus (top-p) filtering, and seeded sampling (lecture §10).

The filters take scores (logits or log-probs; ``-inf`` = excluded) over the last axis and
return scores with the removed tokens set to ``-inf``, like Hugging Face's logits warpers,
applied in HF's order: temperature → top-k → top-p.

- Temperature T > 0: ``z / T`` (``TemperatureLogitsWarper``); T → 0 approaches greedy.
- Top-k (``TopKLogitsWarper``): k' = min(max(k, min_tokens_to_keep), V); a token is removed
  when its score is *below* the k'-th largest, so ties with the k-th value are kept:
  k = 2 on probabilities [0.4, 0.3, 0.3] keeps 3 tokens.
- Top-p (``TopPLogitsWarper``): the smallest set of most probable tokens whose mass reaches p.
  Tokens are taken in order of probability (equal probabilities: lower token id first); token
  i is kept while the mass of the tokens *before* it is < p, so the token that crosses p is
  kept, and also the first ``min_tokens_to_keep`` tokens. On [0.5, 0.3, 0.2]: p = 0.7 keeps
  2 tokens, p = 0.5 keeps 1.

  Comparison with p: a prefix counts as reaching p when its mass is >= p − 1e-10
  (``TOP_P_EPS``), so rounding in the cumulative sum cannot add a token: p = 0.8 on
  [0.5, 0.3, 0.2] keeps 2 tokens, as on paper. HF computes an ascending cumulative sum and
  removes tokens with ``cumsum <= 1 − p`` without a tolerance; it agrees with this rule except
  when a prefix mass is within rounding of p (there it may keep one more: 3 tokens in that
  example). p = 1 keeps every token.

Sampling draws ``u ~ U[0, 1)`` from a ``numpy.random.Generator`` built from the explicit
``seed`` (or passed in) and returns the first token (by id) whose cumulative filtered
probability exceeds ``u`` (inverse CDF), so a run is reproducible from its seed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine._validate import as_float, check_positive_int, check_scalar
from engine.decoding._kernels import _inverse_cdf, _top_k_rows, _top_p_rows
from engine.decoding.models import StepModel, check_model
from engine.decoding.results import Hypothesis, SampleResult, SampleStep
from engine.decoding.search import _stepper
from engine.softmax import softmax

TOP_P_EPS = 1e-10


def _scores(x: object, name: str = "scores") -> tuple[np.ndarray, np.dtype]:
    """Scores as float64 (R, V) rows plus the original dtype; -inf allowed, NaN/+inf not."""
    arr = as_float(x, name, finite=False)
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(
            f"{name}: contains NaN or +inf; expected finite scores (or -inf for excluded tokens)"
        )
    if arr.ndim == 0:
        raise ValueError(f"{name}: expected shape (V,) or (..., V), got a scalar")
    if np.isneginf(arr).all(axis=-1).any():
        raise ValueError(f"{name}: a row is entirely -inf; expected at least one possible token per row")
    return arr.astype(np.float64), arr.dtype


def _back(out: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return out.reshape(shape).astype(dtype, copy=False)


def apply_temperature(scores: object, temperature: float) -> np.ndarray:
    """``scores / T`` (T > 0): below 1 sharpens, above 1 flattens the softmax.

    Args:
        scores: (..., V) logits or log-probs.
        temperature: T > 0.

    Returns:
        (..., V) scaled scores, same dtype.
    """
    arr, dtype = _scores(scores)
    t = check_scalar(temperature, "temperature", low=0.0, low_open=True)
    return _back(arr / t, arr.shape, dtype)


def top_k_filter(scores: object, k: int, *, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Keep the k highest scores per row (ties with the k-th kept); others → -inf.

    Args:
        scores: (..., V) logits or log-probs.
        k: k >= 1 (k >= V keeps everything).
        min_tokens_to_keep: keep at least this many (HF's ``min_tokens_to_keep``).

    Returns:
        (..., V) filtered scores, same dtype.
    """
    arr, dtype = _scores(scores)
    k = check_positive_int(k, "top_k")
    keep_min = check_positive_int(min_tokens_to_keep, "min_tokens_to_keep")
    V = arr.shape[-1]
    rows = np.ascontiguousarray(arr.reshape(-1, V))  # (R, V)
    out = np.empty_like(rows)
    _top_k_rows(rows, min(max(k, keep_min), V), out)
    return _back(out, arr.shape, dtype)


def top_p_keep(scores: object, p: float, *, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Boolean (..., V): which tokens are in the nucleus of softmax(scores) for threshold p.

    Args:
        scores: (..., V) logits or log-probs.
        p: 0 < p <= 1.
        min_tokens_to_keep: keep at least this many of the most probable tokens.
    """
    arr, _ = _scores(scores)
    top_p = check_scalar(p, "top_p", low=0.0, high=1.0, low_open=True)
    keep_min = check_positive_int(min_tokens_to_keep, "min_tokens_to_keep")
    V = arr.shape[-1]
    if top_p == 1.0:
        return np.ones(arr.shape, np.bool_)
    probs = np.ascontiguousarray(softmax(arr.reshape(-1, V), axis=-1))  # (R, V)
    keep = np.empty(probs.shape, np.bool_)
    _top_p_rows(probs, top_p, min(keep_min, V), TOP_P_EPS, keep)
    return keep.reshape(arr.shape)


def top_p_filter(scores: object, p: float, *, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Nucleus filtering: tokens outside the top-p set → -inf (see the module docstring).

    Args:
        scores: (..., V) logits or log-probs.
        p: 0 < p <= 1.
        min_tokens_to_keep: keep at least this many.

    Returns:
        (..., V) filtered scores, same dtype.
    """
    arr, dtype = _scores(scores)
    keep = top_p_keep(arr, p, min_tokens_to_keep=min_tokens_to_keep)
    return _back(np.where(keep, arr, -np.inf), arr.shape, dtype)


def filter_scores(scores: object, *, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Temperature → top-k → top-p, as Hugging Face applies its warpers.

    Args:
        scores: (..., V) logits or log-probs.
        temperature: T > 0.
        top_k: None (off) or k >= 1.
        top_p: None (off) or 0 < p <= 1.
        min_tokens_to_keep: passed to both filters.

    Returns:
        (..., V) scores with the removed tokens at -inf.
    """
    out = apply_temperature(scores, temperature)
    keep_min = check_positive_int(min_tokens_to_keep, "min_tokens_to_keep")
    if top_k is not None:
        out = top_k_filter(out, top_k, min_tokens_to_keep=keep_min)
    if top_p is not None:
        out = top_p_filter(out, top_p, min_tokens_to_keep=keep_min)
    return out


def filtered_probs(scores: object, *, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None, min_tokens_to_keep: int = 1) -> np.ndarray:
    """The distribution sampling draws from: softmax of :func:`filter_scores` (renormalised).

    Returns:
        (..., V) probabilities, 0 for removed tokens, each row summing to 1.
    """
    out = filter_scores(scores, temperature=temperature, top_k=top_k, top_p=top_p,
                        min_tokens_to_keep=min_tokens_to_keep)
    return softmax(out, axis=-1)


def make_rng(seed: int | np.random.Generator) -> np.random.Generator:
    """``numpy.random.default_rng(seed)`` for an int >= 0; a Generator is used as is."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected an integer >= 0 or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def sample_token(scores: object, seed: int | np.random.Generator, *, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, min_tokens_to_keep: int = 1,
                 size: int | None = None) -> int | np.ndarray:
    """Draw from the filtered, renormalised distribution by inverse CDF.

    Args:
        scores: (V,) logits or log-probs.
        seed: an int (a fresh ``default_rng(seed)``) or a Generator (advanced by the draws).
        temperature, top_k, top_p, min_tokens_to_keep: see :func:`filter_scores`.
        size: None for one token, or n for n independent draws.

    Returns:
        A token id, or an int64 array (n,) of token ids.
    """
    rng = make_rng(seed)
    arr, _ = _scores(scores)
    if arr.ndim != 1:
        raise ValueError(f"scores: expected shape (V,), got shape {arr.shape}")
    probs = filtered_probs(arr, temperature=temperature, top_k=top_k, top_p=top_p,
                           min_tokens_to_keep=min_tokens_to_keep)  # (V,)
    n = 1 if size is None else check_positive_int(size, "size")
    u = rng.random(n)  # (n,)
    out = np.empty(n, np.int64)
    _inverse_cdf(np.ascontiguousarray(probs), u, out)
    return int(out[0]) if size is None else out


def sample_decode(model: StepModel, max_length: int, *, seed: int | np.random.Generator,
                  temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                  min_tokens_to_keep: int = 1) -> SampleResult:
    """Generate by sampling each token from the filtered distribution until EOS or max_length.

    Args:
        model: a :class:`~engine.decoding.models.StepModel` (V words).
        max_length: the most tokens to generate (EOS included), >= 1.
        seed: int or Generator; the same seed gives the same sequence.
        temperature, top_k, top_p, min_tokens_to_keep: see :func:`filter_scores`.

    Returns:
        :class:`SampleResult`: the hypothesis (logp under the unfiltered model), one
        :class:`SampleStep` per token (with the uniform drawn), and the stop reason.
    """
    model = check_model(model)
    max_length = check_positive_int(max_length, "max_length")
    rng = make_rng(seed)
    settings: dict[str, Any] = dict(temperature=temperature, top_k=top_k, top_p=top_p,
                                    min_tokens_to_keep=min_tokens_to_keep)
    filtered_probs(np.zeros(1), **settings)  # validate the settings once, before running the model
    step = _stepper(model)
    vocab, eos = tuple(model.vocab), model.eos_token
    lp, state = step(model.initial_state, model.bos_token)  # (V,)
    tokens: list[int] = []
    logps: list[float] = []
    steps: list[SampleStep] = []
    reason = "max-length"
    out = np.empty(1, np.int64)
    for t in range(1, max_length + 1):
        kept = filter_scores(lp, **settings)  # (V,), -inf outside top-k/top-p
        probs = np.ascontiguousarray(softmax(kept))  # (V,)
        u = rng.random(1)
        _inverse_cdf(probs, u, out)
        j = int(out[0])
        tokens.append(j)
        logps.append(float(lp[j]))
        steps.append(SampleStep(t, j, vocab[j], float(lp[j]), float(probs[j]), float(u[0]),
                                int(np.isfinite(kept).sum())))
        if j == eos:
            reason = "eos"
            break
        if t < max_length:
            lp, state = step(state, j)
    total = math.fsum(logps)
    hyp = Hypothesis(tuple(tokens), tuple(vocab[i] for i in tokens), total, total, len(tokens),
                     reason == "eos", tuple(logps))
    settings["seed"] = seed if not isinstance(seed, np.random.Generator) else "generator"
    return SampleResult(hyp, tuple(steps), reason, settings)
