"""The lab's Transformer: configuration, parameter layout, seeded initialisation, PyTorch names.

Layer maths are PyTorch's ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer`` with
``norm_first=True``, ``dropout=p`` (0 by default), ``activation="relu"``, stacked in
``nn.TransformerEncoder`` / ``nn.TransformerDecoder`` with a final LayerNorm each (as
``nn.Transformer`` builds them):

    encoder layer    x ← x + D₁(SelfAttn(LN₁(x)))           (source padding masked)
                     x ← x + D₂(W₂ D(ReLU(W₁ LN₂(x) + b₁)) + b₂)
    decoder layer    y ← y + D₁(SelfAttn(LN₁(y)))           (causal)
                     y ← y + D₂(CrossAttn(LN₂(y), memory))  (memory = LN_enc(encoder output))
                     y ← y + D₃(FFN(LN₃(y)))
    output           logits = LN_dec(y) W_out + b_out        (W_out = E_tgtᵀ when tied)

Dropout. Every D is inverted dropout with the config's ``dropout`` p, in training passes only
(a pass given a generator: :func:`engine.transformer.train.loss_and_grad`); evaluation and
decoding never drop, and p = 0 runs exactly the code without dropout. It is applied in all the
places PyTorch's two layers apply it, and only there, each mask named after PyTorch's module:

    {layer}.self_attn        the self-attention weights α (B·h, L, S), after the softmax,
                             before α V (``nn.MultiheadAttention``'s own dropout)
    {layer}.multihead_attn   the cross-attention weights, likewise (decoder layers)
    {layer}.dropout1         the self-attention block's output, before the residual add
    {layer}.dropout2         encoder: the FFN's output; decoder: the cross-attention's output
    {layer}.dropout3         the decoder FFN's output
    {layer}.dropout          inside each FFN, after the ReLU (before W₂)

with ``{layer}`` = ``encoder.layers.i`` / ``decoder.layers.i``. Nothing else is dropped:
``nn.Transformer`` has no embedding dropout (the PyTorch tutorial's ``PositionalEncoding``
adds one on the inputs; we do not), and the final norms and output projection have none.

Inputs are ``E[token] · √d_model + PE[position]`` (Vaswani et al. 2017 §3.4), with PE the
engine's sinusoidal table (:func:`engine.positional.sinusoidal_encoding`), or no PE at all for
the positional-encoding experiment (``positions="none"``).

Weight layout. All parameters live in one flat vector ``theta`` (float64 or float32); the
named views of :attr:`Transformer.params` carry PyTorch's state-dict names. Every weight
matrix is stored **input-major** (``y = x @ W``), i.e. transposed with respect to PyTorch's
``nn.Linear.weight``; biases and LayerNorm vectors are the same. One exception in the names:
the decoder's cross-attention keeps its query projection and its key-value projection apart
(``q_proj_weight`` (d, d), ``kv_proj_weight`` (d, 2d)), because the queries read the decoder
stream and the keys and values read the memory; PyTorch's ``in_proj_weight`` (3d, d) is their
concatenation ``[q_projᵀ; kv_projᵀ]``. :func:`torch_state_dict` performs exactly these
transposes and concatenations, so ``torch_module.load_state_dict`` takes its output.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from engine._validate import check_choice, check_positive_int, check_scalar, flat_parameters
from engine.positional import sinusoidal_encoding

POSITIONS = ("sinusoidal", "none")
DTYPES = ("float64", "float32")


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and kinds of an encoder-decoder Transformer.

    Attributes:
        vocab_size: V, shared by source and target.
        d_model: d, the width of every token vector.
        num_heads: h; d_model must be divisible by it (d_head = d / h).
        d_ff: hidden width of the position-wise feed-forward block.
        num_encoder_layers, num_decoder_layers: N (1 or more each).
        max_len: longest source or target sequence (rows of the position table).
        tie_embeddings: the output projection is the target embedding transposed.
        scale_embeddings: multiply token embeddings by √d_model (Vaswani et al. §3.4);
            False adds the positions to the raw embeddings.
        positions: ``"sinusoidal"`` (added to the inputs) or ``"none"``.
        dtype: ``"float64"`` or ``"float32"`` for parameters and activations.
        dropout: p, the drop probability of every dropout (0 ≤ p < 1; see the module's
            list); only training passes drop.
    """

    vocab_size: int = 13
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 128
    num_encoder_layers: int = 2
    num_decoder_layers: int = 2
    max_len: int = 64
    tie_embeddings: bool = False
    scale_embeddings: bool = True
    positions: str = "sinusoidal"
    dtype: str = "float64"
    dropout: float = 0.0

    def __post_init__(self) -> None:
        check_positive_int(self.vocab_size, "vocab_size", minimum=2)
        check_positive_int(self.d_model, "d_model")
        check_positive_int(self.num_heads, "num_heads")
        if self.d_model % self.num_heads:
            raise ValueError(f"num_heads: d_model = {self.d_model} is not divisible by "
                             f"num_heads = {self.num_heads}; choose a divisor of {self.d_model}")
        check_positive_int(self.d_ff, "d_ff")
        check_positive_int(self.num_encoder_layers, "num_encoder_layers")
        check_positive_int(self.num_decoder_layers, "num_decoder_layers")
        check_positive_int(self.max_len, "max_len")
        if not isinstance(self.tie_embeddings, (bool, np.bool_)):
            raise ValueError(f"tie_embeddings: expected True or False, got {self.tie_embeddings!r}")
        if not isinstance(self.scale_embeddings, (bool, np.bool_)):
            raise ValueError(f"scale_embeddings: expected True or False, got {self.scale_embeddings!r}")
        check_choice(self.positions, "positions", POSITIONS)
        check_choice(self.dtype, "dtype", DTYPES)
        object.__setattr__(self, "dropout",
                           check_scalar(self.dropout, "dropout", low=0.0, high=1.0, high_open=True))

    @property
    def d_head(self) -> int:
        return self.d_model // self.num_heads

    @property
    def embed_scale(self) -> float:
        """√d_model, or 1 without scaling."""
        return math.sqrt(self.d_model) if self.scale_embeddings else 1.0

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every parameter's shape in storage order, keyed by its PyTorch-style name."""
        V, d, f = self.vocab_size, self.d_model, self.d_ff
        out: dict[str, tuple[int, ...]] = {"src_embed.weight": (V, d), "tgt_embed.weight": (V, d)}

        def norm(prefix: str) -> None:
            out[f"{prefix}.weight"] = (d,)
            out[f"{prefix}.bias"] = (d,)

        def self_attn(prefix: str) -> None:
            out[f"{prefix}.in_proj_weight"] = (d, 3 * d)
            out[f"{prefix}.in_proj_bias"] = (3 * d,)
            out[f"{prefix}.out_proj.weight"] = (d, d)
            out[f"{prefix}.out_proj.bias"] = (d,)

        def ffn(prefix: str) -> None:
            out[f"{prefix}.linear1.weight"] = (d, f)
            out[f"{prefix}.linear1.bias"] = (f,)
            out[f"{prefix}.linear2.weight"] = (f, d)
            out[f"{prefix}.linear2.bias"] = (d,)

        for i in range(self.num_encoder_layers):
            p = f"encoder.layers.{i}"
            norm(f"{p}.norm1")
            self_attn(f"{p}.self_attn")
            norm(f"{p}.norm2")
            ffn(p)
        norm("encoder.norm")
        for i in range(self.num_decoder_layers):
            p = f"decoder.layers.{i}"
            norm(f"{p}.norm1")
            self_attn(f"{p}.self_attn")
            norm(f"{p}.norm2")
            out[f"{p}.multihead_attn.q_proj_weight"] = (d, d)
            out[f"{p}.multihead_attn.q_proj_bias"] = (d,)
            out[f"{p}.multihead_attn.kv_proj_weight"] = (d, 2 * d)
            out[f"{p}.multihead_attn.kv_proj_bias"] = (2 * d,)
            out[f"{p}.multihead_attn.out_proj.weight"] = (d, d)
            out[f"{p}.multihead_attn.out_proj.bias"] = (d,)
            norm(f"{p}.norm3")
            ffn(p)
        norm("decoder.norm")
        if not self.tie_embeddings:
            out["out.weight"] = (d, V)
        out["out.bias"] = (V,)
        return out

    def offsets(self) -> dict[str, tuple[int, int]]:
        """Each parameter's [start, stop) in the flat vector."""
        out, start = {}, 0
        for name, shape in self.shapes().items():
            n = int(np.prod(shape))
            out[name] = (start, start + n)
            start += n
        return out

    @property
    def n_params(self) -> int:
        return sum(int(np.prod(s)) for s in self.shapes().values())

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _xavier_bound(fan_out: int, fan_in: int) -> float:
    return math.sqrt(6.0 / (fan_in + fan_out))


@dataclass
class Transformer:
    """A Transformer: its config and flat parameter vector ``theta`` (the config's dtype)."""

    config: TransformerConfig
    theta: np.ndarray
    params: dict[str, np.ndarray] = field(init=False, repr=False)
    pe: np.ndarray = field(init=False, repr=False)
    _layout: list = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = self.config
        theta = np.ascontiguousarray(self.theta, dtype=c.np_dtype)
        if theta.shape != (c.n_params,):
            raise ValueError(f"theta: expected shape ({c.n_params},) for this config, "
                             f"got shape {theta.shape}")
        self.theta = theta
        shapes = c.shapes()
        self._layout = [(name, a, b, shapes[name]) for name, (a, b) in c.offsets().items()]
        self.params = self.views(theta)
        self.pe = sinusoidal_encoding(c.max_len, c.d_model).astype(c.np_dtype)  # (max_len, d)

    @classmethod
    def init(cls, config: TransformerConfig, seed: int = 0) -> Transformer:
        """Seeded initialisation with the distributions PyTorch's layers start from
        (``nn.TransformerEncoderLayer``, ``nn.TransformerDecoderLayer``, ``nn.Linear``):
        attention's in_proj Xavier-uniform over its full (3d, d) shape with zero bias (the
        cross-attention's q_proj/kv_proj are that matrix's two parts); every other weight
        matrix and its bias U(±1/√fan_in) — except out_proj's bias, 0; LayerNorm gains 1 and
        biases 0; embeddings N(0, 1/d), so E·√d has unit-variance entries."""
        rng = np.random.default_rng(seed)
        d = config.d_model
        theta = np.zeros(config.n_params)
        shapes = config.shapes()
        for name, (a, b) in config.offsets().items():
            n = b - a
            if name.endswith("embed.weight"):
                theta[a:b] = rng.normal(0.0, d ** -0.5, n)
            elif "norm" in name.rsplit(".", 2)[-2]:           # norm1/2/3 or the final norms
                theta[a:b] = 1.0 if name.endswith("weight") else 0.0
            elif name.endswith("proj_weight"):               # in_proj, q_proj, kv_proj
                theta[a:b] = rng.uniform(-1, 1, n) * _xavier_bound(3 * d, d)
            elif name.endswith("proj_bias") or name.endswith("out_proj.bias"):
                theta[a:b] = 0.0
            else:                                            # out_proj.weight, linear1/2, out
                weight = name[:-len("bias")] + "weight" if name.endswith("bias") else name
                fan_in = shapes[weight][0] if weight in shapes else d   # tied output: d
                theta[a:b] = rng.uniform(-1, 1, n) / math.sqrt(fan_in)
        return cls(config, theta)

    def views(self, vec: np.ndarray) -> dict[str, np.ndarray]:
        """Named views of a flat vector laid out like ``theta`` (e.g. a gradient)."""
        return {name: vec[a:b].reshape(shape) for name, a, b, shape in self._layout}

    def copy(self) -> Transformer:
        return Transformer(self.config, self.theta.copy())

    # ------------------------------------------------------------------ save / load records

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Named parameter arrays (float64 copies), e.g. for ``np.savez``."""
        return {name: arr.astype(np.float64) for name, arr in self.params.items()}

    @classmethod
    def from_arrays(cls, config: TransformerConfig, arrays: dict[str, np.ndarray]) -> Transformer:
        """Rebuild a model from :meth:`to_arrays`; a missing or wrong-shaped array raises
        ``ValueError`` naming it, the shape found and the shape the config expects."""
        what = f"d_model = {config.d_model}, d_ff = {config.d_ff}, V = {config.vocab_size}"
        return cls(config, flat_parameters(config.shapes(), arrays, what))


def torch_state_dict(model: Transformer) -> dict[str, np.ndarray]:
    """The parameters under PyTorch's names and layouts (float64 NumPy arrays).

    For a module with ``src_embed``/``tgt_embed`` (``nn.Embedding``), ``encoder``
    (``nn.TransformerEncoder`` with a final norm), ``decoder`` (``nn.TransformerDecoder`` with
    a final norm) and ``out`` (``nn.Linear(d, V)``; with tied embeddings its weight is
    ``tgt_embed.weight``): matrices are transposed to (out, in), and each cross-attention's
    ``q_proj``/``kv_proj`` pair becomes one ``in_proj`` (3d, d) and bias (3d,).
    """
    out: dict[str, np.ndarray] = {}
    p = {k: v.astype(np.float64) for k, v in model.params.items()}
    for name, arr in p.items():
        if ".multihead_attn.q_proj" in name or ".multihead_attn.kv_proj" in name:
            continue
        out[name] = arr.T.copy() if arr.ndim == 2 and "embed" not in name else arr.copy()
    for i in range(model.config.num_decoder_layers):
        pre = f"decoder.layers.{i}.multihead_attn"
        out[f"{pre}.in_proj_weight"] = np.concatenate([p[f"{pre}.q_proj_weight"].T,
                                                        p[f"{pre}.kv_proj_weight"].T])
        out[f"{pre}.in_proj_bias"] = np.concatenate([p[f"{pre}.q_proj_bias"],
                                                      p[f"{pre}.kv_proj_bias"]])
    if model.config.tie_embeddings:
        out["out.weight"] = p["tgt_embed.weight"].copy()
    return out
