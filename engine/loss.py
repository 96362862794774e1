"""Cross-entropy loss for sequence outputs and its gradient (lecture §12 "Cross-Entropy Loss").

    L_t = -log softmax(z_t)[y_t] = -z_{t, y_t} + log Σ_v exp(z_{t, v})
    ∂L_t / ∂z_t = softmax(z_t) - onehot(y_t)

Semantics follow ``torch.nn.functional.cross_entropy`` with class-index targets and no class
weights, with the class axis **last** (logits (..., V), targets (...)); this equals torch on
``logits.reshape(-1, V)``:

- ``ignore_index``: targets equal to it (padding) add nothing to the loss or the gradient;
- ``reduction="mean"`` divides by the number of non-ignored targets; if every target is
  ignored the mean is 0/0 = NaN, as in PyTorch (the gradient is then all zeros);
  ``"sum"`` adds them (the notes' sequence loss L = Σ_t L_t); ``"none"`` gives one loss per
  target (per decoder step), 0 where ignored;
- ``label_smoothing`` ε: loss = (1 − ε)·nll + ε·mean_c(−log p_c) (Szegedy et al., 2016, as
  PyTorch implements it), so the gradient is p − (1 − ε)·onehot − ε/V.
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine._validate import as_float, as_int, check_choice, check_scalar, shape_str

_REDUCTIONS = ("mean", "sum", "none")


@jit
def _ce_rows(z, t, ignore_index, eps, losses):
    """losses (N,) for logits z (N, V) and targets t (N,); returns the non-ignored count."""
    N, V = z.shape
    count = 0
    for n in range(N):
        if t[n] == ignore_index:
            losses[n] = 0.0
            continue
        count += 1
        m = z[n, 0]
        mean_z = 0.0
        for v in range(V):
            if z[n, v] > m:
                m = z[n, v]
            mean_z += z[n, v]
        mean_z /= V
        s = 0.0
        for v in range(V):
            s += math.exp(z[n, v] - m)
        lse = m + math.log(s)  # log Σ_v exp(z_v)
        nll = lse - z[n, t[n]]  # −log p_y
        smooth = lse - mean_z  # mean_c(−log p_c)
        losses[n] = (1.0 - eps) * nll + eps * smooth
    return count


@jit
def _ce_grad_rows(z, t, ignore_index, eps, row_scale, grad):
    """grad (N, V) = row_scale · (p − (1 − ε)·onehot(t) − ε/V); zero rows where ignored."""
    N, V = z.shape
    for n in range(N):
        if t[n] == ignore_index:
            for v in range(V):
                grad[n, v] = 0.0
            continue
        m = z[n, 0]
        for v in range(V):
            if z[n, v] > m:
                m = z[n, v]
        s = 0.0
        for v in range(V):
            s += math.exp(z[n, v] - m)
        for v in range(V):
            p = math.exp(z[n, v] - m) / s
            target = (1.0 - eps) if v == t[n] else 0.0
            grad[n, v] = row_scale * (p - target - eps / V)


def _inputs(logits: object, targets: object, ignore_index: int, reduction: str,
            label_smoothing: float):
    z = as_float(logits, "logits", ndim=(1, 2, 3))
    V = z.shape[-1]
    t = as_int(targets, "targets")
    if t.shape != z.shape[:-1]:
        want = shape_str(z.shape[:-1]) + (" (a single integer)" if z.ndim == 1 else "")
        raise ValueError(f"targets: expected shape {want} to match logits {shape_str(z.shape)}, "
                         f"got shape {shape_str(t.shape)}")
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise ValueError(f"ignore_index: expected an integer, got {ignore_index!r}")
    bad = (t != ignore_index) & ((t < 0) | (t >= V))
    if bad.any():
        raise ValueError(f"targets: class indices must be in [0, {V}) or equal ignore_index = "
                         f"{ignore_index}, got {int(t[bad].flat[0])}")
    check_choice(reduction, "reduction", _REDUCTIONS)
    eps = check_scalar(label_smoothing, "label_smoothing", low=0.0, high=1.0)
    return z, t, V, int(ignore_index), eps


def cross_entropy(logits: object, targets: object, ignore_index: int = -100,
                  reduction: str = "mean",
                  label_smoothing: float = 0.0) -> np.floating | np.ndarray:
    """Cross-entropy of logits against integer targets (PyTorch semantics, class axis last).

    Args:
        logits: unnormalised scores (V,), (N, V) or (B, T, V).
        targets: class indices shaped like ``logits`` without its last axis: () (a single
            int), (N,) or (B, T). Entries equal to ``ignore_index`` are skipped.
        ignore_index: the padding target that contributes nothing.
        reduction: ``"mean"`` (over non-ignored targets; NaN if there are none, as PyTorch),
            ``"sum"``, or ``"none"`` (per-target losses, 0 where ignored).
        label_smoothing: ε in [0, 1].

    Returns:
        A scalar (NumPy float of the logits' dtype) for ``"mean"``/``"sum"``; for ``"none"``
        an array shaped like ``targets``.

    Raises:
        ValueError: on wrong shapes, NaN/inf logits, targets outside [0, V) that are not
            ``ignore_index``, unknown reduction or ε outside [0, 1].
    """
    z, t, V, ignore, eps = _inputs(logits, targets, ignore_index, reduction, label_smoothing)
    z2 = z.reshape(-1, V)  # (N, V)
    losses = np.empty(z2.shape[0], dtype=np.float64)  # (N,)
    count = _ce_rows(z2, t.reshape(-1), ignore, eps, losses)
    if reduction == "none":
        return losses.astype(z.dtype).reshape(t.shape)
    total = float(losses.sum())
    value = total if reduction == "sum" else (total / count if count else math.nan)
    return z.dtype.type(value)


def cross_entropy_grad(logits: object, targets: object, ignore_index: int = -100,
                       reduction: str = "mean", label_smoothing: float = 0.0) -> np.ndarray:
    """Gradient of :func:`cross_entropy` with respect to the logits.

    Row n (not ignored): p_n − (1 − ε)·onehot(y_n) − ε/V, divided by the number of
    non-ignored targets for ``"mean"``; ignored rows are zero. For ``"none"`` each row is
    the gradient of that row's own loss (the same as ``"sum"``).

    Args:
        logits: (V,), (N, V) or (B, T, V).
        targets: shaped like ``logits`` without its last axis.
        ignore_index: the padding target.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        label_smoothing: ε in [0, 1].

    Returns:
        dL/dlogits, same shape and dtype as ``logits`` (all zeros if every target is ignored).

    Raises:
        ValueError: as :func:`cross_entropy`.
    """
    z, t, V, ignore, eps = _inputs(logits, targets, ignore_index, reduction, label_smoothing)
    z2 = z.reshape(-1, V)  # (N, V)
    t1 = t.reshape(-1)
    count = int(np.count_nonzero(t1 != ignore))
    row_scale = 1.0 / count if (reduction == "mean" and count) else 1.0
    grad = np.empty(z2.shape, dtype=z.dtype)  # (N, V)
    _ce_grad_rows(z2, t1, ignore, eps, row_scale, grad)
    return grad.reshape(z.shape)
