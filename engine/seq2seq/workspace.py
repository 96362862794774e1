"""The training pass's work arrays, allocated once and reused by every step.

A training step of the lab's model writes ~10 MB of intermediate arrays (encoder states,
gate caches, attention's tanh values, their gradients). Allocating them afresh at every
step made glibc hand the memory back to the system after each step and the next step
fault every page in and have it zeroed again (~2,250 page faults per step of the
bottleneck lab, ~18 % of its CPU time). A :class:`Workspace` keeps one buffer instead:
each pass takes named views of it (:class:`Work`) shaped for its batch, and the kernels
write into those, so a step allocates nothing large.

One workspace serves one pass at a time: each thread that trains needs its own (the lab
gives each model's training loop one, and a step split into parts gives each part its own,
:meth:`Workspace.part`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.seq2seq.model import Seq2SeqConfig


class Work(NamedTuple):
    """Views of a workspace for one batch: B sequences, S source and T target positions.

    Sizes from the config: e, d, V; dA = d (or 2d, bidirectional); G·d = 3d (GRU) or d;
    R = 2 directions (bidirectional) or 1; a' = a with attention, 1 for the fixed context
    (whose attention arrays are unused). The passes overwrite every array before reading
    it, or zero it first.
    """

    # encoder forward
    X: np.ndarray        # (S, B, e)              X_t = E_x[src[:, t]]
    GX: np.ndarray       # (R, S, B, G d)         X_t W_HX + b of each direction
    Hs: np.ndarray       # (R, S + 1, B, d)       the states of each direction
    cache: np.ndarray    # (R, 4, S, B, d)        r, z, n, gh_n of every encoder step
    Ann: np.ndarray      # (S, B, dA)             the annotations H_i
    C: np.ndarray        # (B, dA)                the fixed context
    EK: np.ndarray       # (S, B, a')             e^{2K}, K = H W_k the keys
    gh: np.ndarray       # (B, G d)               scratch of one step
    # decoder forward, every step kept for the backward pass
    EW: np.ndarray       # (V, G d)               E_y W_HY + b for every token
    CW: np.ndarray       # (B, G d)               C W_HC (fixed context)
    Cx: np.ndarray       # (T, B, dA)             contexts C_t
    Qa: np.ndarray       # (T, B, a')             e^{2q}, q = s_{t-1} W_q the queries
    U: np.ndarray        # (T, B, S, a')          tanh(q + K_i)   ((T, B, 1, 1) if fixed)
    Sd: np.ndarray       # (T + 1, B, d)          decoder states s_t
    dc: np.ndarray       # (4, T, B, d)           decoder gate caches
    LP: np.ndarray       # (T, B, V)              log-probabilities
    Al: np.ndarray       # (T, B, S)              attention weights α
    coins: np.ndarray    # (T, B)                 teacher-forcing draws
    tokens: np.ndarray   # (B,) int64             the current decoder input
    every: np.ndarray    # (B,) int64             T: no decoder step is padding
    gx: np.ndarray       # (B, G d)               scratch of one step
    logits: np.ndarray   # (B, V)
    # backward
    grad: np.ndarray     # (P,)                   dL/dθ
    dlog: np.ndarray     # (T, B, V)              dL/dlogits
    dS: np.ndarray       # (T, B, d)              dL/ds_t through the output layer
    dGX: np.ndarray      # (T, B, G d)            dL/d the decoder's input side
    dGH: np.ndarray      # (T, B, G d)            dL/d its recurrent side
    dQ: np.ndarray       # (T, B, a')             dL/dq_t
    DEW: np.ndarray      # (V, G d)               dL/dEW
    dK: np.ndarray       # (S, B, a')
    dAnn: np.ndarray     # (S, B, dA)
    dC: np.ndarray       # (B, dA)
    ds: np.ndarray       # (B, d)
    ds_direct: np.ndarray  # (B, d)
    dctx: np.ndarray     # (B, dA)
    dsq: np.ndarray      # (B, d)
    dalpha: np.ndarray   # (S,)
    dH: np.ndarray       # (S + 1, B, d)          dL/dH of one encoder direction
    eGX: np.ndarray      # (S, B, G d)            dL/d its input side
    eGH: np.ndarray      # (S, B, G d)            dL/d its recurrent side
    dX: np.ndarray       # (S, B, e)
    dh: np.ndarray       # (B, d)
    dh_direct: np.ndarray  # (B, d)


def work_shapes(config: Seq2SeqConfig, B: int, S: int, T: int) -> dict[str, tuple[int, ...]]:
    """The shape of every field of :class:`Work`, in field order."""
    e, d, V, A = config.embed_dim, config.hidden_dim, config.vocab_size, config.attn_dim
    Gd = config.gates * d
    dA = config.annotation_dim
    R = 2 if config.bidirectional else 1
    att = config.decoder == "attention"
    Aa = A if att else 1
    shapes = {
        "X": (S, B, e), "GX": (R, S, B, Gd), "Hs": (R, S + 1, B, d), "cache": (R, 4, S, B, d),
        "Ann": (S, B, dA), "C": (B, dA), "EK": (S, B, Aa), "gh": (B, Gd),
        "EW": (V, Gd), "CW": (B, Gd), "Cx": (T, B, dA), "Qa": (T, B, Aa),
        "U": (T, B, S, Aa) if att else (T, B, 1, 1), "Sd": (T + 1, B, d), "dc": (4, T, B, d),
        "LP": (T, B, V), "Al": (T, B, S), "coins": (T, B), "tokens": (B,), "every": (B,),
        "gx": (B, Gd), "logits": (B, V),
        "grad": (config.n_params,), "dlog": (T, B, V), "dS": (T, B, d), "dGX": (T, B, Gd),
        "dGH": (T, B, Gd), "dQ": (T, B, Aa), "DEW": (V, Gd), "dK": (S, B, Aa),
        "dAnn": (S, B, dA), "dC": (B, dA), "ds": (B, d), "ds_direct": (B, d),
        "dctx": (B, dA), "dsq": (B, d), "dalpha": (S,), "dH": (S + 1, B, d),
        "eGX": (S, B, Gd), "eGH": (S, B, Gd), "dX": (S, B, e), "dh": (B, d),
        "dh_direct": (B, d),
    }
    assert tuple(shapes) == Work._fields
    return shapes


_INT_FIELDS = frozenset({"tokens", "every"})
_MAX_VIEWS = 512  # batch shapes remembered (the lab's stream has a few hundred at most)


class Workspace:
    """One buffer for the work arrays of a model's training (or decoding) passes.

    :meth:`work` hands out views shaped for a batch; the buffer grows (by half again, at
    least) when a batch needs more, so a run of varied batch shapes settles on a few sizes.
    Views for a shape already seen are reused as they are.
    """

    def __init__(self) -> None:
        self._buffer = np.empty(0)
        self._views: dict[tuple, Work] = {}
        self._parts: list[Workspace] = []

    def part(self, k: int) -> Workspace:
        """The workspace of part k of a batch split into parts (part 0 is this one)."""
        if k == 0:
            return self
        while len(self._parts) < k:
            self._parts.append(Workspace())
        return self._parts[k - 1]

    @property
    def nbytes(self) -> int:
        """Bytes held (its parts' included)."""
        return self._buffer.nbytes + sum(p.nbytes for p in self._parts)

    def work(self, config: Seq2SeqConfig, B: int, S: int, T: int) -> Work:
        """Views of the buffer for a batch of B sequences, S source and T target positions."""
        key = (config, B, S, T)
        views = self._views.get(key)
        if views is not None:
            return views
        shapes = work_shapes(config, B, S, T)
        sizes = [int(np.prod(s)) for s in shapes.values()]
        need = sum(sizes)
        if need > self._buffer.size:
            self._buffer = np.empty(max(need, self._buffer.size * 3 // 2))
            self._views.clear()                     # views of the old buffer
        arrays, at = [], 0
        for (name, shape), n in zip(shapes.items(), sizes, strict=True):
            part = self._buffer[at:at + n]
            if name in _INT_FIELDS:
                part = part.view(np.int64)          # same 8-byte items
            arrays.append(part.reshape(shape))
            at += n
        views = Work(*arrays)
        if len(self._views) >= _MAX_VIEWS:           # many shapes: keep the newest only
            self._views.clear()
        self._views[key] = views
        return views
