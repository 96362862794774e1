"""Tiled, FlashAttention-style attention: the output without the n×n weight matrix.

Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
IO-Awareness", Algorithm 1, on a CPU. For each block of queries we walk over blocks of keys
and keep, per query row, a running maximum m, a running denominator l and an unnormalised
output accumulator O:

    S    = Q_blk K_blkᵀ · scale                       # (B_q, B_k) scores of this block
    m'   = max(m, rowmax(S))                           # new running max
    P    = exp(S − m')                                 # (B_q, B_k), never stored for all keys
    l    = l · exp(m − m') + rowsum(P)                 # rescale the old sum, add the new
    O    = O · exp(m − m') + P V_blk                   # rescale the old output, add the new
    out  = O / l                                       # after the last key block

Memory beyond the inputs and the output is one (B_q, B_k) tile per thread plus a transposed
copy of K, so it grows like n·d, never n², and the result equals softmax(Q Kᵀ · scale) V up
to rounding.

What makes it fast on a CPU (each step measured on a 2-core AVX-512 Xeon, see
``benchmarks/README.md``):

- The block products go to BLAS through numba's own bridge to scipy's OpenBLAS
  (``numba_xxgemm``, what ``np.dot(a, b, out)`` calls) with beta = 1, so ``P V_blk`` is added
  straight into O. Where OpenBLAS runs its AVX-512 kernels (SkylakeX and later), both
  products are cut into 64 × 128 pieces, small enough for its unpacked small-matrix path,
  which skips re-packing the operands on every call; its other kernel sets (Haswell, Zen…)
  pack on every call, and there one call per 256 × 512 tile is faster (:func:`default_tiles`
  picks by the kernel set OpenBLAS reports). For the scores the keys are first copied into
  transposed blocks of that many keys (``_blocked_transpose``). :func:`calibrate_blocks`
  times a few tilings on the machine at hand, and :func:`set_blocks` makes the winner the
  default.
- Scores are kept in base 2: log₂e is folded into the scale once, so exp(S − m) becomes
  2^(S − m) = 2^k · 2^f with k = round(S − m) and |f| ≤ ½. A degree-5 (float32) or 12
  (float64) polynomial gives 2^f, and 2^k is built from k's bits. The loop is branch-free
  and vectorises; ``math.exp`` in a loop does not. A masked score (−inf) gives exactly 0.
- The row max is a chain of ``llvm.maxnum`` calls flagged ``nnan`` (inputs are checked
  finite; −inf from the masks is not NaN), which LLVM vectorises as a reduction; a plain
  ``a if a > b else b`` loop stays scalar and cost more than the exponential.
- These row loops may use 512-bit vectors (``_wide_vectors``): LLVM otherwise sticks to
  256 bits on AVX-512 Intel cores.
- (batch, query block) tasks run on :func:`get_threads` threads: the kernel is a
  plain serial ``@jit`` that releases the GIL, called from a small thread pool; the threads
  claim tasks from a shared atomic counter, longest rows first when causal. Against ``parallel=True`` /
  ``prange`` this halves the cold compile
  and, on a busy machine, avoids OpenMP's end-of-loop barrier waiting a scheduler tick for
  an idle thread (measured: 0.4 ms instead of 12 ms at n = 256). BLAS runs single-threaded
  inside, so the two levels of threading do not fight over the cores.

Masks follow the rest of the engine (and PyTorch SDPA): ``causal=True`` lets query i see keys
j ≤ i (top-left aligned when L ≠ S); ``key_padding`` marks real keys with True; a query that
may see no key gets a zero output.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np

from engine._blas import single_threaded_blas
from engine._jit import default_threads, jit
from engine._tiles import (  # noqa: F401
    LN2,
    LOG2E,
    _exp2_inplace,
    _gemm,
    _mask_tile,
    _next_task,
    _row_max,
    _row_sum,
)
from engine._validate import as_bool, as_float, check_positive_int, check_scalar, result_dtype

# The default tiling depends on which OpenBLAS kernels the CPU gets (default_tiles):
# (B_q, B_k, piece rows, piece keys), each block product computed in BLAS calls of at most
# piece rows × piece keys.
SMALL_PIECE_TILES = (128, 512, 64, 128)
"""For OpenBLAS's AVX-512 kernels (SkylakeX and its successors): with d·64·128 ≤ 10⁶ (d ≤ 122)
they take a small-matrix path that reads the operands in place instead of re-packing them on
every call (~160 vs ~115 GFLOP/s on a 2-core Xeon, model 167; tuned there)."""
WHOLE_TILE_TILES = (256, 512, 256, 512)
"""For every other OpenBLAS kernel set (Haswell, Zen…), which packs the operands on every call
anyway: one call per tile product, so fewer and bigger calls. On a 2-core AMD EPYC of family 26
(Zen 5), whose OpenBLAS picks its Haswell kernels, 256 × 512 tiles took 45–47 ms at n = 4096 and
d = 64 against 53–55 ms with the small pieces, and 387–411 ms against 468 ms at n = 16384 on
two threads (``engine.flash.calibrate_blocks``)."""
SMALL_MATRIX_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
"""OpenBLAS kernel sets (``openblas_get_corename``, lower case) with the small-matrix path."""


# --------------------------------------------------------------------------- the kernel

@jit(fma=True)
def _flash_kernel(Q, Kt, V, scale2, causal, key_ok, has_pad, bq_size, bk_size, pr, pk, out, lse,
                  counter):
    """out (B, L, d_v) = softmax(Q Kᵀ · scale, masked) V for Q (B, L, d), V (B, S, d_v) and the
    keys K (B, S, d) given blocked and transposed: Kt[b, j // pk, :, j % pk] = K[b, j]. Both
    block products run in BLAS calls of at most pr query rows × pk keys.

    Claims (batch, query block) tasks one at a time from ``counter`` (int64 (1,), shared by
    the threads running this call) until all B · ⌈L / B_q⌉ are done, so a thread that starts
    late simply does fewer. scale2 = scale · log₂e (scores in base 2); key_ok (B, S) marks
    real keys when has_pad. Also writes lse (B, L) = ln Σ_j exp(s_ij), the row statistic the
    backward recomputes the weights from (−inf for a row that sees no key).
    """
    B, L, d = Q.shape
    S = V.shape[1]
    dv = V.shape[2]
    nqb = (L + bq_size - 1) // bq_size
    neg_inf = -np.inf
    bqm = min(L, bq_size)
    m = np.empty(bqm, Q.dtype)                             # (B_q,) running max, base 2
    l = np.empty(bqm, Q.dtype)                             # (B_q,) running sum
    acc = np.empty((bqm, dv), Q.dtype)                     # (B_q, d_v) unnormalised output
    s = np.empty((bqm, min(S, bk_size)), Q.dtype)          # (B_q, B_k) scores, then P in place
    q_blk = np.empty((bqm, d), Q.dtype)                    # (B_q, d) queries · scale2
    while True:
        task = _next_task(counter)                         # shared with the other threads
        if task >= B * nqb:
            break
        b = task // nqb
        qb = task % nqb
        if causal:                                         # longest rows first: a late
            qb = nqb - 1 - qb                              # short task evens the end out
        i0 = qb * bq_size
        i1 = min(L, i0 + bq_size)
        bq = i1 - i0
        for i in range(bq):
            m[i] = neg_inf
            l[i] = 0.0
            for c in range(dv):
                acc[i, c] = 0.0
            for c in range(d):
                q_blk[i, c] = Q[b, i0 + i, c] * scale2
        k_end = min(S, i1) if causal else S                # causal: keys past the last query are unseen
        for k0 in range(0, k_end, bk_size):
            k1 = min(k_end, k0 + bk_size)
            bk = k1 - k0
            for r0 in range(0, bq, pr):                    # S = Q_blk K_blkᵀ (BLAS, pieces
                r1 = min(bq, r0 + pr)                      # that never cross a block of Kt)
                j = k0
                while j < k1:
                    kb = j // pk
                    off = j - kb * pk
                    w = min(k1 - j, pk - off)
                    _gemm(q_blk[r0:r1], Kt[b, kb, :, off:off + w], s[r0:r1, j - k0:j - k0 + w],
                          False, False, 1.0, 0.0)
                    j += w
            _mask_tile(s, b, i0, bq, k0, bk, causal, key_ok, has_pad)
            for i in range(bq):
                m_old = m[i]
                row = s[i]
                m_new = _row_max(row, bk, m_old)
                if m_new == neg_inf:                       # nothing visible yet: P row = 0
                    for j in range(bk):
                        row[j] = 0.0
                    continue
                _exp2_inplace(row, bk, m_new)              # P = 2^(S − m')
                rs = _row_sum(row, bk)
                if m_new > m_old:                          # rescale by 2^(m − m'); 0 on the first block
                    corr = math.exp((m_old - m_new) * LN2)
                    l[i] = l[i] * corr + rs
                    for c in range(dv):
                        acc[i, c] *= corr
                    m[i] = m_new
                else:
                    l[i] += rs
            for r0 in range(0, bq, pr):                    # O += P V_blk (BLAS, pieces)
                r1 = min(bq, r0 + pr)
                for c0 in range(0, bk, pk):
                    c1 = min(bk, c0 + pk)
                    _gemm(s[r0:r1, c0:c1], V[b, k0 + c0:k0 + c1], acc[r0:r1], False, False, 1.0, 1.0)
        for i in range(bq):
            inv = 1.0 / l[i] if l[i] > 0 else 0.0          # fully masked row → zero output
            for c in range(dv):
                out[b, i0 + i, c] = acc[i, c] * inv
            lse[b, i0 + i] = m[i] * LN2 + math.log(l[i]) if l[i] > 0 else neg_inf


# --------------------------------------------------------------------------- public API

_pool = None
_pool_size = 0
_pool_lock = threading.Lock()
_threads: int | None = None


def set_threads(n: int) -> None:
    """Threads :func:`flash_attention` may use (default: ``numba.config.NUMBA_NUM_THREADS``,
    i.e. the cores, or the ``NUMBA_NUM_THREADS`` environment variable)."""
    global _threads
    _threads = check_positive_int(n, "n")


def get_threads() -> int:
    """Threads :func:`flash_attention` may use (see :func:`set_threads`).

    Deliberately not ``numba.get_num_threads()``: that launches numba's parallel threading
    layer (OpenMP here), which the kernel does not use and whose idle threads slowed
    PyTorch's OpenMP in the same process several-fold (n = 4096: ~45 ms → ~150 ms).
    """
    if _threads is not None:
        return _threads
    return default_threads()  # numba's NUMBA_NUM_THREADS (default: the usable cores)


def _blocked_transpose(k: np.ndarray, block: int) -> np.ndarray:
    """Kt (B, ⌈S/block⌉, d, block) with Kt[b, j // block, :, j % block] = k[b, j], zero-padded.

    Transposed blocks of keys let the scores be computed as plain (not transposed) small
    products whose key operand has a short row stride: with Kᵀ as one (d, S) array the stride
    would be S floats (16 KiB at S = 4096), and those reads collide in the cache.
    """
    B, S, d = k.shape
    nkb, full = -(-S // block), S // block
    kt = np.zeros((B, nkb, d, block), k.dtype)
    kt[:, :full] = k[:, :full * block].reshape(B, full, block, d).transpose(0, 1, 3, 2)
    if full < nkb:
        kt[:, full, :, :S - full * block] = k[:, full * block:].transpose(0, 2, 1)
    return kt


def _thread_pool(size: int):
    """A lasting pool of at least ``size`` threads (the kernel releases the GIL)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool_size < size:
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="flash")
            _pool_size = size
        return _pool




def run_on_threads(kernel, workers: int, args_of) -> None:
    """Run ``kernel(*args_of(t), counter)`` on ``workers`` threads (this one included).

    The kernels claim tasks from the shared ``counter`` until none are left, so the threads
    balance themselves; BLAS stays single-threaded inside (see the module docstring).
    """
    with single_threaded_blas:
        counter = np.zeros(1, np.int64)                    # next task to claim
        if workers == 1:
            kernel(*args_of(0), counter)
            return
        pool = _thread_pool(workers - 1)
        futures = [pool.submit(kernel, *args_of(t), counter) for t in range(1, workers)]
        kernel(*args_of(0), counter)                       # this thread works too
        for f in futures:
            f.result()


# --------------------------------------------------------------------------- block sizes

BLOCK_CANDIDATES = (
    (128, 512, 64, 128), (64, 512, 64, 128), (128, 256, 64, 128), (256, 512, 64, 128),
    (128, 1024, 64, 128), (128, 512, 128, 512), (256, 512, 256, 512), (64, 256, 64, 256))
"""(B_q, B_k, piece rows, piece keys) that :func:`calibrate_blocks` times, both defaults of
:func:`default_tiles` among them. Small pieces suit a BLAS with a small-matrix path that skips
packing (OpenBLAS's AVX-512 kernels); one product per tile suits a BLAS that packs every call
anyway (OpenBLAS's Haswell/Zen kernels), where fewer, bigger calls win."""

_tiles: tuple[int, int, int, int] | None = None  # None: default_tiles() on first use


def default_tiles(core: str | None = None) -> tuple[int, int, int, int]:
    """(B_q, B_k, piece rows, piece keys) for the OpenBLAS kernel set ``core`` (default: the
    one the kernels call on this machine, ``single_threaded_blas.architecture()``).

    :data:`SMALL_PIECE_TILES` where OpenBLAS has its small-matrix path, and where the BLAS is
    not an OpenBLAS that names its kernels (nothing measured there); :data:`WHOLE_TILE_TILES`
    for every other OpenBLAS kernel set. A calibration (:func:`calibrate_blocks`, kept per
    machine by ``lab scaling``) overrides this through :func:`set_blocks`.
    """
    return SMALL_PIECE_TILES if small_matrix_blas(core) else WHOLE_TILE_TILES


def small_matrix_blas(core: str | None = None) -> bool:
    """Whether the BLAS the kernels call is taken to have OpenBLAS's small-matrix path: the
    kernel set ``core`` (default: this machine's) is in :data:`SMALL_MATRIX_CORES`, or the
    BLAS does not name its kernels (then the tilings tuned first are kept)."""
    if core is None:
        core = single_threaded_blas.architecture()
    return core is None or core.lower() in SMALL_MATRIX_CORES


def _current_tiles() -> tuple[int, int, int, int]:
    global _tiles
    if _tiles is None:
        _tiles = default_tiles()
    return _tiles


def set_blocks(block_q: int, block_k: int, piece_rows: int | None = None,
               piece_keys: int | None = None) -> None:
    """Default tile and BLAS-piece sizes of :func:`flash_attention` (e.g. from
    :func:`calibrate_blocks`); pieces left out keep their current default."""
    global _tiles
    bq, bk = check_positive_int(block_q, "block_q"), check_positive_int(block_k, "block_k")
    _, _, pr, pk = _current_tiles()
    _tiles = (bq, bk,
              pr if piece_rows is None else check_positive_int(piece_rows, "piece_rows"),
              pk if piece_keys is None else check_positive_int(piece_keys, "piece_keys"))


def reset_blocks() -> None:
    """Back to this machine's :func:`default_tiles` (undoes :func:`set_blocks`)."""
    global _tiles
    _tiles = None


def get_blocks() -> tuple[int, int]:
    """The (B_q, B_k) :func:`flash_attention` uses when none are passed."""
    return _current_tiles()[:2]


def get_pieces() -> tuple[int, int]:
    """The (rows, keys) of each BLAS call inside a tile (see :data:`BLOCK_CANDIDATES`)."""
    return _current_tiles()[2:]


def calibrate_blocks(n: int = 2048, d: int = 64, *, dtype: type = np.float32,
                     candidates: tuple[tuple[int, ...], ...] = BLOCK_CANDIDATES,
                     repeat: int = 3, seed: int = 0, clock=time.perf_counter) -> dict:
    """Time each candidate tiling on one seeded n×d problem and pick the fastest.

    The best tile depends on the CPU's caches and on which BLAS kernels it gets; this
    measures instead of guessing. Each candidate runs once untimed, then ``repeat`` times in
    turn with the others (so a burst of load hits them alike); the minimum counts. About
    20 calls at n = 2048: a second or two. Nothing is set or saved here: pass ``best`` to
    :func:`set_blocks` (the tutor keeps it in its cache folder).

    Args:
        n, d: the problem timed (one head, L = S = n).
        dtype: float32 (what the lab uses) or float64.
        candidates: (B_q, B_k) pairs or (B_q, B_k, piece rows, piece keys) quadruples.
        repeat: timed rounds; seed: of the random Q, K, V; clock: seconds (injectable).

    Returns:
        ``{"best": the fastest candidate as given, "seconds": {"B_qxB_k[/rxk]": fastest
        seconds}, "n", "d", "dtype", "threads"}``.
    """
    size = check_positive_int(n, "n")
    width = check_positive_int(d, "d")
    reps = check_positive_int(repeat, "repeat")
    if not candidates:
        raise ValueError("candidates: expected at least one (block_q, block_k) pair")
    rng = np.random.default_rng(seed)
    Q: np.ndarray = rng.standard_normal((size, width)).astype(dtype)
    K: np.ndarray = rng.standard_normal((size, width)).astype(dtype)
    V: np.ndarray = rng.standard_normal((size, width)).astype(dtype)
    best_of = {tuple(c): math.inf for c in candidates}

    def call(c: tuple[int, ...]) -> None:
        if len(c) == 2:
            flash_attention(Q, K, V, block_q=c[0], block_k=c[1])
        else:
            flash_attention(Q, K, V, block_q=c[0], block_k=c[1], piece_rows=c[2], piece_keys=c[3])

    for c in best_of:
        call(c)                                            # compile / warm caches
    for _ in range(reps):
        for c in best_of:
            t0 = clock()
            call(c)
            best_of[c] = min(best_of[c], clock() - t0)
    best = min(best_of, key=lambda c: best_of[c])

    def name(c: tuple[int, ...]) -> str:
        return f"{c[0]}x{c[1]}" + ("" if len(c) == 2 else f"/{c[2]}x{c[3]}")

    return {"best": best, "seconds": {name(c): t for c, t in best_of.items()},
            "n": size, "d": width, "dtype": np.dtype(dtype).name, "threads": get_threads()}


def prepare_flash(Q: object, K: object, V: object, key_padding: object | None,
                  scale: float | None) -> tuple:
    """Check :func:`flash_attention`'s inputs (shared with its backward).

    Returns ``(Q, K, V, key_ok, has_pad, scale, squeeze)`` with Q, K, V as (B, ·, ·) arrays
    of one dtype, key_ok (B, S) (or a dummy (1, 1) when not has_pad) and squeeze = the
    inputs were 2-D.
    """
    q = as_float(Q, "Q", ndim=(2, 3))
    dtype = result_dtype(q, np.asarray(K), np.asarray(V))
    q = q.astype(dtype, copy=False)
    k = as_float(K, "K", ndim=q.ndim, dtype=dtype)
    v = as_float(V, "V", ndim=q.ndim, dtype=dtype)
    squeeze = q.ndim == 2
    if squeeze:
        q, k, v = q[None], k[None], v[None]
    B, L, d = q.shape
    if k.shape[0] != B or k.shape[2] != d:
        raise ValueError(f"K: expected shape {(B, 'S', d)[1 if squeeze else 0:]}, got "
                         f"{k.shape[1 if squeeze else 0:]}")
    S = k.shape[1]
    if v.shape[0] != B or v.shape[1] != S:
        raise ValueError(f"V: expected shape {(B, S, 'd_v')[1 if squeeze else 0:]}, got "
                         f"{v.shape[1 if squeeze else 0:]}")
    sc = 1.0 / math.sqrt(d) if scale is None else check_scalar(scale, "scale")
    if key_padding is None:
        key_ok, has_pad = np.ones((1, 1), np.bool_), False
    else:
        key_ok = as_bool(key_padding, "key_padding", shape=(S,) if squeeze else (B, S))
        key_ok, has_pad = np.ascontiguousarray(key_ok.reshape(B, S)), True
    return q, k, v, key_ok, has_pad, sc, squeeze


def flash_attention(
    Q: object,
    K: object,
    V: object,
    *,
    causal: bool = False,
    key_padding: object | None = None,
    scale: float | None = None,
    block_q: int | None = None,
    block_k: int | None = None,
    return_lse: bool = False,
    piece_rows: int | None = None,
    piece_keys: int | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Exact scaled dot-product attention computed tile by tile (no n×n matrix).

    Args:
        Q: queries, (L, d) or (B, L, d).
        K: keys, (S, d) or (B, S, d).
        V: values, (S, d_v) or (B, S, d_v).
        causal: query i sees keys j ≤ i only (top-left aligned when L ≠ S, as PyTorch).
        key_padding: booleans (S,) or (B, S), True = a real key that may be attended.
        scale: score multiplier; default 1/√d.
        block_q: query rows per tile (and per parallel task); default from
            :func:`get_blocks` (:func:`default_tiles` unless set by :func:`set_blocks`).
        block_k: keys per tile; default from :func:`get_blocks`.
        return_lse: also return the row statistics the backward needs
            (:func:`engine.flash_backward.flash_attention_backward`).
        piece_rows, piece_keys: the largest BLAS call inside a tile; default from
            :func:`get_pieces`. Only speed depends on them.

    Returns:
        The attention output, (L, d_v) or (B, L, d_v), same dtype as Q (float32 stays
        float32). Rows that may see no key are zero. With ``return_lse``, ``(out, lse)``
        where lse (L,) or (B, L) is ln Σ_j exp(scale · q_i · k_j) over the visible keys
        (−inf for a row that sees none), as PyTorch's flash kernels save it.

    Raises:
        ValueError: on mismatched shapes, non-finite values or bad block sizes.
    """
    q, k, v, key_ok, has_pad, sc, squeeze = prepare_flash(Q, K, V, key_padding, scale)
    tiles = _current_tiles()
    bq = check_positive_int(tiles[0] if block_q is None else block_q, "block_q")
    bk = check_positive_int(tiles[1] if block_k is None else block_k, "block_k")
    pr = check_positive_int(tiles[2] if piece_rows is None else piece_rows, "piece_rows")
    pk = check_positive_int(tiles[3] if piece_keys is None else piece_keys, "piece_keys")
    B, L, _ = q.shape
    dtype = q.dtype
    out = np.empty((B, L, v.shape[2]), dtype)
    lse = np.empty((B, L), dtype)
    kt = _blocked_transpose(k, pk)
    workers = max(1, min(get_threads(), B * -(-L // bq)))  # no more threads than tasks
    args = (q, kt, v, dtype.type(sc * LOG2E), bool(causal), key_ok, has_pad, bq, bk, pr, pk, out, lse)
    run_on_threads(_flash_kernel, workers, lambda t: args)
    if return_lse:
        return (out[0], lse[0]) if squeeze else (out, lse)
    return out[0] if squeeze else out
