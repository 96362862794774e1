"""Text helpers every trace renderer shares: ASCII math and aligned value blocks.

``--plain`` output is pure ASCII for everything the tutor writes itself: Unicode math is
spelled out (``α₁`` → ``alpha_1``, ``√d_k`` → ``sqrt(d_k)``, ``Σⱼ`` → ``sum_j``, ``Kᵀ`` →
``K^T``). Labels a student typed in are printed as given.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import numpy as np

from engine.trace import fmt, fmt_num

_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₔₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ",
                       "0123456789+-=()aeoxehklmnpstijruv"))
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀᵗ⊤ᵈᵏᵛʰᵉᵃᵇᶜᵐˢᵒᵖʳᵘʷˣʸᶻ",
                         "0123456789+-=()inTtTdkvheabcmsopruwxyz"))

_WORDS = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "η": "eta",
    "θ": "theta",
    "λ": "lambda",
    "μ": "mu",
    "π": "pi",
    "σ": "sigma",
    "τ": "tau",
    "Σ": "sum",
    "∑": "sum",
    "Π": "prod",
    "∏": "prod",
    "Δ": "Delta",
    "∇": "grad",
    "∂": "d",
    "ŷ": "y_hat",
    "Ŷ": "Y_hat",
    "·": "*",
    "≈": "~",
    "→": "->",
    "←": "<-",
    "⇒": "=>",
    "⇔": "<=>",
    "↔": "<->",
    "≤": "<=",
    "≥": ">=",
    "≠": "!=",
    "−": "-",
    "…": "...",
    "—": "--",
    "–": "-",
    "’": "'",
    "‘": "'",
    "“": '"',
    "”": '"',
    "ℝ": "R",
    "∞": "inf",
    "‖": "||",
    "⟨": "<",
    "⟩": ">",
    "⊙": "(*)",
    "∝": "~",
    "′": "'",
    "″": "''",
    "⌊": "floor(",
    "⌋": ")",
    "ε": "eps",
    "ω": "omega",
    "φ": "phi",
    "ρ": "rho",
    "ξ": "xi",
    "ℓ": "l",
    "κ": "kappa",
    "χ": "chi",
    "ψ": "psi",
    "ζ": "zeta",
    "ν": "nu",
    "Ω": "Omega",
    "Θ": "Theta",
    "Λ": "Lambda",
    "Φ": "Phi",
    "Ψ": "Psi",
    "Γ": "Gamma",
    "§": "section ",
    "✓": "ok",
    "✗": "x",
    "√": "sqrt",
    "⌈": "ceil(",
    "⌉": ")",
    "ᵢ": "_i",
    "°": " deg",
    "±": "+/-",
    "∘": "o",
    "⁄": "/",
    "≡": "==",
    "¬": "not ",
    "∀": "for all ",
    "▸": ">",
    "•": "*",
    "│": "|",
    "─": "-",
}

# words that need spaces around them unless the text already has them: "3×4" → "3 x 4"
_SPACED = {"×": "x", "∈": "in", "∉": "not in", "∧": "and", "∨": "or"}

_SQRT = re.compile(r"√(\(|[A-Za-z0-9_.{}]+)")


def _runs(text: str, table: dict[str, str], mark: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] in table:
            j = i
            while j < len(text) and text[j] in table:
                j += 1
            run = "".join(table[c] for c in text[i:j])
            out.append(f"{mark}{run}" if run.isalnum() else f"{mark}{{{run}}}")
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def asciify(text: str) -> str:
    """Unicode math → ASCII: ``α₁ = e^s₁ / Σⱼ e^sⱼ`` → ``alpha_1 = e^s_1 / sum_j e^s_j``."""
    if text.isascii():
        return text
    text = _runs(text, _SUBSCRIPTS, "_")
    text = _runs(text, _SUPERSCRIPTS, "^")
    text = _SQRT.sub(lambda m: "sqrt(" if m.group(1) == "(" else f"sqrt({m.group(1)})", text)
    out = []
    for k, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
        elif ch in _SPACED:
            before = k > 0 and not text[k - 1].isspace()
            after = k + 1 < len(text) and not text[k + 1].isspace()
            out.append((" " if before else "") + _SPACED[ch] + (" " if after else ""))
        elif ch in _WORDS:
            out.append(_WORDS[ch])
        elif unicodedata.combining(ch):
            out.append("~" if ch == "\u0303" else "")
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(plain if plain else ch)
    return "".join(out)


UNSET = "not set (worked out from the other inputs)"
"""How the text renderers write an optional input left unset (``null`` in ``--json``)."""


def value_lines(value: Any, digits: int = 4) -> list[str]:
    """A value as text lines: one line for scalars, vectors and words; aligned rows for matrices."""
    if value is None:  # an optional input the trace derives itself: not Python's "None"
        return [UNSET]
    if isinstance(value, str):
        return value.splitlines() or [""]
    if isinstance(value, (list, tuple)) and value and all(isinstance(x, str) for x in value):
        return ["[" + ", ".join(value) + "]"]
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        return [str(value)]
    if arr.dtype == object:
        return [str(value)]
    if arr.ndim < 2 or arr.dtype.kind in "US":
        return [fmt(arr, digits)]
    if arr.ndim > 2:  # a stack, e.g. one weight matrix per head: "weights = [0]" read as a value
        out: list[str] = []
        kind = "matrix" if arr.ndim == 3 else "block"
        for i, block in enumerate(arr):
            out.append(f"{kind} {i + 1} of {len(arr)}:")
            out.extend("  " + line for line in value_lines(block, digits))
        return out
    cells = [[fmt_num(x, digits) for x in row] for row in arr.tolist()]
    widths = [max(len(row[c]) for row in cells) for c in range(arr.shape[1])]
    return ["[" + "  ".join(cell.rjust(w) for cell, w in zip(row, widths)) + "]" for row in cells]


SOURCES = {
    "notes": "the lecture notes' own numbers",
    "notes+built": "the notes' numbers, completed with a small seeded example where they give none",
    "built": "a small seeded example (the notes give no numbers here)",
    "user": "your inputs",
}


def source_label(source: str) -> str:
    return SOURCES.get(source, source)


def section_label(section: int) -> str:
    return f"§{section}"
