"""The lab's seq2seq model: configuration, parameter layout, seeded initialisation.

Follows the lecture's equations (§1–§4, §12): an embedding, a recurrent encoder (GRU, or the
plain tanh RNN H_t = tanh(W_HX X_t + W_HH H_{t-1} + b) of the notes), and a decoder that is
either the fixed-context one of §1–2 (C = H_T fed at every step) or Bahdanau et al. (2014)'s
additive attention (a fresh C_t at every step, §4). The decoder starts from H_T; its output
is P(Y_t | Y_<t, C) = softmax(W_O H_t^(d) + b_O).

The parameters are one flat float64 vector; :attr:`Seq2Seq.params` gives named views of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from engine._validate import check_choice, check_positive_int, flat_parameters
from engine.seq2seq._layout import GRU, RNN

CELLS = ("gru", "rnn")
DECODERS = ("attention", "fixed")

#: parameter names in storage order, with the lecture symbol each one plays
PARAM_NAMES = (
    "enc_embed",   # (V, e)     encoder embedding: X_t
    "enc_W_x",     # (e, G d)   W_HX
    "enc_W_h",     # (d, G d)   W_HH
    "enc_b_x",     # (G d,)     b (input side)
    "enc_b_h",     # (G d,)     b (recurrent side, PyTorch's second bias)
    "enc_W_x_rev",  # (e, G d)   the right-to-left direction (bidirectional encoder only)
    "enc_W_h_rev",  # (d, G d)
    "enc_b_x_rev",  # (G d,)
    "enc_b_h_rev",  # (G d,)
    "dec_embed",   # (V, e)     decoder embedding: Y_{t-1}
    "dec_W_y",     # (e, G d)   W_HY
    "dec_W_c",     # (dA, G d)  W_HC (dA = d, or 2d with a bidirectional encoder)
    "dec_W_h",     # (d, G d)   W_HH^(d)
    "dec_b_x",     # (G d,)     b^(d)
    "dec_b_h",     # (G d,)
    "att_W_q",     # (d, a)     W_Q of additive attention (query = s_{t-1})
    "att_W_k",     # (dA, a)    W_K (keys = encoder annotations H_i)
    "att_v",       # (a,)       v
    "out_W",       # (d, V)     W_O (stored transposed: logits = H W_O)
    "out_b",       # (V,)       b_O
)


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Sizes and kinds of a seq2seq model.

    Attributes:
        vocab_size: V, shared by source and target (pad, bos, eos and the symbols).
        embed_dim: e, the embedding size d_x.
        hidden_dim: d, the hidden size d_h of encoder and decoder.
        attn_dim: a, the hidden size h of the additive scorer (ignored by ``fixed``).
        cell: ``"gru"`` or ``"rnn"`` (tanh).
        decoder: ``"attention"`` (Bahdanau) or ``"fixed"`` (C = H_T at every step).
        bidirectional: read the source both ways; annotations H_i = [→h_i ; ←h_i] and the
            fixed context C = [→h_T ; ←h_1] (Bahdanau et al. 2014's encoder). The decoder
            always starts from s_0 = →h_T.
    """

    vocab_size: int = 13
    embed_dim: int = 16
    hidden_dim: int = 64
    attn_dim: int = 32
    cell: str = "gru"
    decoder: str = "attention"
    bidirectional: bool = False

    def __post_init__(self) -> None:
        check_positive_int(self.vocab_size, "vocab_size", minimum=4)
        check_positive_int(self.embed_dim, "embed_dim")
        check_positive_int(self.hidden_dim, "hidden_dim")
        check_positive_int(self.attn_dim, "attn_dim")
        check_choice(self.cell, "cell", CELLS)
        check_choice(self.decoder, "decoder", DECODERS)
        if not isinstance(self.bidirectional, (bool, np.bool_)):
            raise ValueError(f"bidirectional: expected True or False, got {self.bidirectional!r}")

    @property
    def gates(self) -> int:
        """G: 3 stacked gates [r, z, n] for the GRU, 1 for the tanh RNN."""
        return 3 if self.cell == "gru" else 1

    @property
    def annotation_dim(self) -> int:
        """dA, the size of an annotation H_i and of the context C_t: d, or 2d if bidirectional."""
        return 2 * self.hidden_dim if self.bidirectional else self.hidden_dim

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every parameter's shape, in storage order; unused ones (the right-to-left
        direction of a unidirectional encoder, attention of the fixed decoder) are empty."""
        V, e, d, a, G = self.vocab_size, self.embed_dim, self.hidden_dim, self.attn_dim, self.gates
        dA = self.annotation_dim
        att = self.decoder == "attention"
        r = 1 if self.bidirectional else 0
        return {
            "enc_embed": (V, e), "enc_W_x": (e, G * d), "enc_W_h": (d, G * d),
            "enc_b_x": (G * d,), "enc_b_h": (G * d,),
            "enc_W_x_rev": (r * e, G * d), "enc_W_h_rev": (r * d, G * d),
            "enc_b_x_rev": (r * G * d,), "enc_b_h_rev": (r * G * d,),
            "dec_embed": (V, e), "dec_W_y": (e, G * d), "dec_W_c": (dA, G * d),
            "dec_W_h": (d, G * d), "dec_b_x": (G * d,), "dec_b_h": (G * d,),
            "att_W_q": (d, a) if att else (0, a), "att_W_k": (dA, a) if att else (0, a),
            "att_v": (a,) if att else (0,),
            "out_W": (d, V), "out_b": (V,),
        }

    def offsets(self) -> np.ndarray:
        """Start of each parameter in the flat vector (one more entry: the total)."""
        sizes = [int(np.prod(s)) for s in self.shapes().values()]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @property
    def n_params(self) -> int:
        return int(self.offsets()[-1])

    @property
    def cell_kind(self) -> int:
        """The kernels' ``cell`` argument: ``GRU`` or ``RNN`` of :mod:`engine.seq2seq._layout`."""
        return GRU if self.cell == "gru" else RNN

    def views(self, vec: np.ndarray) -> dict[str, np.ndarray]:
        """Named views of a flat vector laid out like the parameters (θ or a gradient)."""
        offs = self.offsets()
        return {name: vec[offs[k]:offs[k + 1]].reshape(shape)
                for k, (name, shape) in enumerate(self.shapes().items())}

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class Seq2Seq:
    """A seq2seq model: its config and its flat parameter vector ``theta`` (float64)."""

    config: Seq2SeqConfig
    theta: np.ndarray
    _offs: np.ndarray = field(init=False, repr=False)
    _views: tuple[np.ndarray, dict[str, np.ndarray]] | None = field(init=False, repr=False,
                                                                     compare=False, default=None)

    def __post_init__(self) -> None:
        self._offs = self.config.offsets()
        want = int(self._offs[-1])
        theta = np.ascontiguousarray(self.theta, dtype=np.float64)
        if theta.shape != (want,):
            raise ValueError(f"theta: expected shape ({want},) for this config, got shape {theta.shape}")
        self.theta = theta

    @classmethod
    def init(cls, config: Seq2SeqConfig, seed: int = 0) -> Seq2Seq:
        """Seeded initialisation as PyTorch does it: embeddings N(0, 1); every other
        weight and bias U(-1/√fan, 1/√fan) with fan = d (recurrent and output layers) or
        a (the scorer's v)."""
        rng = np.random.default_rng(seed)
        theta = np.empty(config.n_params)
        offs = config.offsets()
        d, a = config.hidden_dim, config.attn_dim
        for k, name in enumerate(config.shapes()):
            n = int(offs[k + 1] - offs[k])
            if name.endswith("embed"):
                theta[offs[k]:offs[k + 1]] = rng.standard_normal(n)
            else:
                fan = a if name == "att_v" else d
                bound = 1.0 / np.sqrt(fan)
                theta[offs[k]:offs[k + 1]] = rng.uniform(-bound, bound, n)
        return cls(config, theta)

    @property
    def params(self) -> dict[str, np.ndarray]:
        """Named views into ``theta`` (writing to one changes the model); built once per
        ``theta`` array."""
        if self._views is None or self._views[0] is not self.theta:
            self._views = (self.theta, self.config.views(self.theta))
        return self._views[1]

    def copy(self) -> Seq2Seq:
        return Seq2Seq(self.config, self.theta.copy())

    # ------------------------------------------------------------------ save / load records

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Named parameter arrays (copies), e.g. for ``np.savez``; the config goes alongside."""
        return {name: arr.copy() for name, arr in self.params.items()}

    @classmethod
    def from_arrays(cls, config: Seq2SeqConfig, arrays: dict[str, np.ndarray]) -> Seq2Seq:
        """Rebuild a model from :meth:`to_arrays`; a missing or wrong-shaped array raises
        ``ValueError`` naming it, the shape found and the shape the config expects."""
        what = f"a {config.cell}/{config.decoder} model with hidden size {config.hidden_dim}"
        return cls(config, flat_parameters(config.shapes(), arrays, what))
