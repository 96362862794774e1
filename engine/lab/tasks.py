"""The lab's toy tasks: a digit vocabulary, padded batches, held-out test sets.

Every sequence is L random digits followed by EOS; the target is the same digits reversed,
copied or sorted, then EOS. Batches are drawn so their lengths lie close together (little
padding), and the held-out test sequences are excluded from the training stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from engine._validate import check_choice
from engine.seq2seq import Batch
from engine.seq2seq._kernels import BOS as _MODEL_BOS

# ---------------------------------------------------------------------------- vocabulary

PAD, BOS, EOS = 0, 1, 2
assert BOS == _MODEL_BOS, "the model feeds token 1 first"
DIGIT0 = 3
TOKENS: tuple[str, ...] = ("<pad>", "<s>", "</s>") + tuple(str(i) for i in range(10))
VOCAB_SIZE = len(TOKENS)
TASKS = ("reverse", "copy", "sort")
TASK_HELP = {
    "reverse": "write the digits in reverse order (alignment: the anti-diagonal)",
    "copy": "write the digits unchanged (alignment: the diagonal)",
    "sort": "write the digits in ascending order (alignment: by value)",
}


def token_labels(tokens: Iterable[int]) -> list[str]:
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
