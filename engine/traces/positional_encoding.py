"""Trace ``positional-encoding`` (§6, Vaswani et al. 2017 §3.5): the sinusoidal table.

    PE(pos, 2i) = sin(pos / base^(2i/d)),   PE(pos, 2i+1) = cos(pos / base^(2i/d))

The notes mention positional encodings without numbers; this builds the table for a few
positions and shows why it helps: dot products between rows depend on the distance only.
"""

from __future__ import annotations

import numpy as np

from engine.positional import sinusoidal_encoding
from engine.trace import InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, v

INPUTS = [
    InputSpec("n_positions", "int", 4, "how many positions (0 … n−1)", low=1, high=64),
    InputSpec("d_model", "int", 6, "embedding width d", low=1, high=64),
    InputSpec("base", "scalar", 10000.0, "wavelength base (10000 in the paper)", low=1.0,
              low_open=True),
]


def build(n_positions: int, d_model: int, base: float) -> Trace:
    inputs = {"n_positions": n_positions, "d_model": d_model, "base": base}
    pairs = (d_model + 1) // 2
    i = np.arange(pairs)
    freq = 1.0 / base ** (2 * i / d_model)  # (pairs,)
    steps = [Step(
        "Frequencies",
        "ωᵢ = 1 / base^(2i/d)",
        lines(*(f"i = {k}: ω = 1 / {n(base)}^({2 * k}/{d_model}) = {n(freq[k], 6)}, "
                f"wavelength 2π/ω = {n(2 * np.pi / freq[k], 2)}" for k in range(pairs))),
        {"omega": freq},
        "Each pair of columns is a clock ticking at its own speed, from fast to very slow.",
    )]

    pos = np.arange(n_positions)[:, None]
    angles = pos * freq[None, :]  # (n, pairs)
    steps.append(Step(
        "Angles",
        "θ(pos, i) = pos · ωᵢ",
        lines(*(f"pos {p}: {v(angles[p], 4)}" for p in range(n_positions))),
        {"angles": angles},
        "Position 0 is all zeros; later positions turn every clock further.",
    ))

    PE = np.zeros((n_positions, d_model))
    PE[:, 0::2] = np.sin(angles)[:, : (d_model + 1) // 2]
    PE[:, 1::2] = np.cos(angles)[:, : d_model // 2]
    steps.append(Step(
        "Sine and cosine columns",
        "PE(pos, 2i) = sin θ,  PE(pos, 2i+1) = cos θ",
        lines(*(f"pos {p}: {v(PE[p], 4)}" for p in range(n_positions))),
        {"PE": PE},
        "Add row pos to the embedding of the token at position pos; every position gets a "
        "distinct fingerprint." + (" With odd d the last column is a lone sine." if d_model % 2 else ""),
    ))

    G = PE @ PE.T  # (n, n)
    steps.append(Step(
        "Distance, not position",
        "PE(p)·PE(q) = Σᵢ cos((p − q) ωᵢ)  (for even d)",
        lines(*(f"pos {p}: {v(G[p], 3)}" for p in range(n_positions))),
        {"gram": G},
        "Each diagonal of this matrix is constant: the similarity of two positions depends "
        "only on how far apart they are. Self-attention, which by itself ignores order, can "
        "read relative position from it." if d_model % 2 == 0 else
        "With an odd width the lone sine column breaks the exact pattern slightly.",
    ))

    return Trace(
        name="positional-encoding",
        title="Sinusoidal positional encoding",
        section=6,
        inputs=inputs,
        steps=steps,
        result={"PE": PE},
        fused={"PE": sinusoidal_encoding(n_positions, d_model, base)},
        source=source_of(INPUTS, inputs, "built"),
        summary=f"The fixed sine/cosine table for {n_positions} positions and width {d_model}.",
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 2-5 positions, an even width 2-6, base 100 or 10000."""
    return {"n_positions": int(rng.integers(2, 6)), "d_model": int(_draw.choice(rng, [2, 4, 6])),
            "base": float(_draw.choice(rng, [100.0, 10000.0]))}
