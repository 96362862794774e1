"""Input checks shared by the engine's public functions.

Every public engine function converts its array arguments with :func:`as_float` (or
:func:`as_bool` / :func:`as_int`) before calling a kernel, so a wrong input fails with a
``ValueError`` that names the argument, the shape received and the shape expected, instead of
a numba typing error or a silent broadcast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

FLOATS = (np.float32, np.float64)


def shape_str(shape: Sequence[int | str]) -> str:
    """``(3, 4)`` style, also for symbolic shapes like ``("L", "d_k")``; ``()`` for scalars."""
    items = [str(s) for s in shape]
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def result_dtype(*arrays: np.ndarray) -> np.dtype:
    """float32 when every floating input is float32, otherwise float64."""
    if arrays and all(a.dtype == np.float32 for a in arrays):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def as_float(
    x: object,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = None,
    shape: Sequence[int | str] | None = None,
    dtype: np.dtype | type | None = None,
    allow_empty: bool = False,
    finite: bool = True,
) -> np.ndarray:
    """Return ``x`` as a C-contiguous float32/float64 array after checking it.

    Args:
        x: array-like input.
        name: argument name used in error messages.
        ndim: required number of dimensions (or a tuple of accepted ones).
        shape: expected shape; ints are checked, strings are symbolic names that only appear
            in the message (``("L", "d_k")``). Its length also fixes ``ndim``.
        dtype: force this dtype; by default float32 stays float32 and everything else
            becomes float64.
        allow_empty: accept arrays with a zero-length axis.
        finite: reject NaN and ±inf.

    Raises:
        ValueError: naming the argument, what was received and what was expected.
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{name}: could not read it as a numeric array ({exc})") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
    ):
        raise ValueError(f"{name}: expected numbers, got values of type {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name}: expected real numbers, got complex values")
    if dtype is None:
        dtype = np.float32 if arr.dtype == np.float32 else np.float64
    arr = np.asarray(arr, dtype=dtype, order="C")  # unlike ascontiguousarray, keeps 0-d as 0-d
    want_ndim: tuple[int, ...] | None
    if shape is not None:
        want_ndim = (len(shape),)
    elif isinstance(ndim, int):
        want_ndim = (ndim,)
    else:
        want_ndim = ndim
    if want_ndim is not None and arr.ndim not in want_ndim:
        expected = shape_str(shape) if shape is not None else (f"a {'-D or '.join(map(str, want_ndim))}-D "
                                                               "array")
        raise ValueError(
            f"{name}: expected shape {expected}, got shape {shape_str(arr.shape)}"
            if shape is not None
            else f"{name}: expected {expected}, got shape {shape_str(arr.shape)}"
        )
    if shape is not None:
        for axis, want in enumerate(shape):
            if isinstance(want, (int, np.integer)) and arr.shape[axis] != want:
                raise ValueError(
                    f"{name}: expected shape {shape_str(shape)}, got shape {shape_str(arr.shape)}"
                )
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name}: is empty (shape {shape_str(arr.shape)}); expected at least one element")
    if finite and not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "inf"
        raise ValueError(f"{name}: contains {bad}; expected finite numbers")
    return arr


def as_bool(x: object, name: str, *, shape: Sequence[int | str] | None = None) -> np.ndarray:
    """Return ``x`` as a C-contiguous boolean array of the given shape (True = may attend).

    Only ``bool`` arrays (and Python ``True``/``False`` lists) are masks. A numeric array
    raises, zeros and ones included: PyTorch reads a float mask as *added* to the scores
    (0 = keep), the opposite of a 0/1 boolean reading, so guessing would silently mask
    everything in one convention or nothing in the other.
    """
    arr = np.asarray(x)
    if arr.dtype != np.bool_:
        raise ValueError(f"{name}: expected a boolean mask (True = may attend), got {arr.dtype} "
                         "values; convert it with mask.astype(bool), or for an additive float mask "
                         "(0 = keep, -inf = drop) use mask == 0")
    arr = np.asarray(arr, order="C")
    if shape is not None:
        ok = arr.ndim == len(shape) and all(
            not isinstance(w, (int, np.integer)) or arr.shape[i] == w for i, w in enumerate(shape)
        )
        if not ok:
            raise ValueError(f"{name}: expected shape {shape_str(shape)}, got shape {shape_str(arr.shape)}")
    return arr


def as_int(x: object, name: str, *, ndim: int | None = None, low: int | None = None,
           high: int | None = None) -> np.ndarray:
    """Return ``x`` as a C-contiguous int64 array, optionally checking ``low <= x < high``."""
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name}: expected whole numbers, got {arr.ravel()[:4].tolist()}")
    elif arr.dtype.kind not in "iub":
        raise ValueError(f"{name}: expected integers, got values of type {arr.dtype}")
    arr = np.asarray(arr, dtype=np.int64, order="C")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array of integers, got shape {shape_str(arr.shape)}")
    if low is not None and arr.size and arr.min() < low:
        raise ValueError(f"{name}: values must be >= {low}, got {int(arr.min())}")
    if high is not None and arr.size and arr.max() >= high:
        raise ValueError(f"{name}: values must be < {high}, got {int(arr.max())}")
    return arr


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value}")
    return int(value)


def check_scalar(value: object, name: str, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number inside the given (optionally open) interval."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {value!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{name}: expected a finite number, got {v}")
    lo_bad = low is not None and (v <= low if low_open else v < low)
    hi_bad = high is not None and (v >= high if high_open else v > high)
    if lo_bad or hi_bad:
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(f"{name}: expected a value in {lb}{lo}, {hi}{hb}, got {v:g}")
    return v


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """One of a fixed set of strings (e.g. ``reduction`` or ``activation``)."""
    if not isinstance(value, str) or value not in choices:
        opts = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name}: expected one of {opts}, got {value!r}")
    return value


def check_same_dim(arr: np.ndarray, axis: int, want: int, name: str,
                   expected: Sequence[int | str], why: str) -> None:
    """Raise if ``arr.shape[axis] != want``; ``why`` says which other argument fixed ``want``."""
    if arr.shape[axis] != want:
        raise ValueError(
            f"{name}: expected shape {shape_str(expected)}, got shape {shape_str(arr.shape)} ({why})"
        )


def broadcast_mask(mask: object, shape: tuple[int, ...], name: str = "mask",
                   expected: str = "(..., L, S)") -> np.ndarray:
    """A boolean mask (True = may attend) broadcast to ``shape``, returned as a contiguous copy.

    Raises:
        ValueError: if ``mask`` is not boolean (or 0/1) or does not broadcast to ``shape``.
    """
    m = as_bool(mask, name)
    try:
        full = np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(
            f"{name}: expected a shape broadcastable to {shape_str(shape)} {expected}, "
            f"got shape {shape_str(m.shape)}"
        ) from None
    return np.ascontiguousarray(full)


def flat_parameters(shapes: Mapping[str, tuple[int, ...]], arrays: Mapping[str, object],
                    what: str) -> np.ndarray:
    """The arrays named in ``shapes``, in that order, checked and flattened into one float64
    vector (a model's ``theta`` from its saved arrays).

    Raises:
        ValueError: naming the first array that is missing, has another shape (``what`` says
            which model expected it) or holds non-finite or non-floating values.
    """
    parts = []
    for name, shape in shapes.items():
        if name not in arrays:
            raise ValueError(f"{name}: missing from the saved weights")
        arr = np.asarray(arrays[name])
        if arr.shape != shape:
            raise ValueError(f"{name}: expected shape {shape} for {what}, got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: expected finite floating-point weights")
        parts.append(arr.astype(np.float64).ravel())
    return np.concatenate(parts)
