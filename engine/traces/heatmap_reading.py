"""Trace ``heatmap-reading`` (§11): reading the "my feet hurt" → "j' ai mal au pieds" table.

The notes' table has rows ai, mal, au, pieds and columns my, feet, hurt. The target has five
words, so the row for "j'" is missing; §4 gives it ([0.6, 0.3, 0.1]) and this trace puts it
back before reading the alignment.
"""

from __future__ import annotations

import numpy as np

from engine.softmax import softmax
from engine.trace import Erratum, HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, v

INPUTS = [
    InputSpec("source", "labels", ["my", "feet", "hurt"], "source words (columns)", shape=("S",)),
    InputSpec("target", "labels", ["j'", "ai", "mal", "au", "pieds"],
              "the whole generated target"),
    InputSpec("rows", "labels", ["ai", "mal", "au", "pieds"], "the target words the table has",
              shape=("R",)),
    InputSpec("weights", "matrix", [[0.1, 0.2, 0.7], [0.1, 0.8, 0.1], [0.05, 0.90, 0.05],
                                    [0.05, 0.85, 0.10]],
              "the table: one row per listed target word", shape=("R", "S"), low=0.0, high=1.0),
    InputSpec("missing_rows", "matrix", [[0.6, 0.3, 0.1]],
              "weights for target words the table lacks, in target order (§4 gives j')",
              shape=("M", "S"), low=0.0, high=1.0),
]


def _entropy_bits(row: np.ndarray) -> float:
    nz = row[row > 0]
    return float(-(nz * np.log2(nz)).sum())


def build(source: list[str], target: list[str], rows: list[str], weights: np.ndarray,
          missing_rows: np.ndarray) -> Trace:
    inputs = {"source": source, "target": target, "rows": rows, "weights": weights,
              "missing_rows": missing_rows}
    R, S = weights.shape
    for w in rows:
        if w not in target:
            raise ValueError(f"input rows: {w!r} is not in the target ({' '.join(target)})")
    missing = [w for w in target if w not in rows]
    steps = [Step(
        "Shape of the table",
        "rows = target words, columns = source words",
        lines(f"table: {R} rows × {S} columns ({', '.join(rows)} × {', '.join(source)})",
              f"target: {len(target)} words ({' '.join(target)})",
              f"missing rows: {', '.join(missing) if missing else 'none'}"),
        {"rows": R, "columns": S, "missing": missing},
        "A full alignment table has one row per generated word and one column per source word.",
    )]

    sums = weights.sum(axis=1)
    steps.append(Step(
        "Each row is a distribution",
        "Σⱼ αᵢⱼ = 1",
        lines(*(f"{w}: " + " + ".join(n(a) for a in weights[i]) + f" = {n(sums[i])}"
                for i, w in enumerate(rows))),
        {"row_sums": sums},
        "Rows, not columns, sum to 1: each target word spends one unit of attention.",
    ))

    if len(missing) != missing_rows.shape[0] and missing:
        raise ValueError(f"input missing_rows: got {missing_rows.shape[0]} rows, expected "
                         f"{len(missing)} (one for each of {', '.join(missing)})")
    full = np.zeros((len(target), S))
    extra = dict(zip(missing, missing_rows)) if missing else {}
    for t, w in enumerate(target):
        full[t] = weights[rows.index(w)] if w in rows else extra[w]
    steps.append(Step(
        "Complete the table",
        "insert the missing rows in target order",
        lines(*(f"{w:<6} {v(full[t])}" + ("   ← added" if w in extra else "")
                for t, w in enumerate(target))),
        {"table": full},
        # name §4 only while the row is still the notes' one
        f"The §4 example supplies the j' row ({v(full[0])}), so the full picture is "
        f"{len(target)} × {S}." if missing == ["j'"] == target[:1]
        and same_as_defaults(INPUTS, inputs, "missing_rows")
        else "Missing rows come from the missing_rows input.",
    ))

    # the same rule as dynamic-context and pooling: a row of attention weights sums to 1
    off = [t for t in range(len(target)) if abs(full[t].sum() - 1.0) > 1e-6]
    if off:
        word = target[off[0]]
        raise ValueError(f"input {'weights' if word in rows else 'missing_rows'}: the row for "
                         f"{word!r} sums to {n(full[off[0]].sum())}, expected attention weights "
                         "summing to 1 per row")
    normalised = full / full.sum(axis=1, keepdims=True)
    align = [source[int(np.argmax(full[t]))] for t in range(len(target))]
    steps.append(Step(
        "Alignment: where each word looks",
        "alignᵢ = argmaxⱼ αᵢⱼ",
        lines(*(f"{w} → {align[t]} ({n(full[t].max())})" for t, w in enumerate(target))),
        {"alignment": align},
        "Read row by row: the brightest cell is the source word the decoder leaned on.",
    ))

    col = full.sum(axis=0)
    ent = np.array([_entropy_bits(r) for r in normalised])
    steps.append(Step(
        "Columns and sharpness",
        "column mass = Σᵢ αᵢⱼ;  H(αᵢ) = −Σⱼ αᵢⱼ log₂ αᵢⱼ",
        lines("column mass: " + ", ".join(f"{s} {n(c)}" for s, c in zip(source, col)),
              "entropy (bits): " + ", ".join(f"{w} {n(e, 3)}" for w, e in zip(target, ent)),
              f"a uniform row would have log₂ {S} = {n(np.log2(S), 3)} bits"),
        {"column_mass": col, "entropy_bits": ent},
        f"\"{source[int(np.argmax(col))]}\" collects the most attention overall: one source "
        "word feeding several target words appears as a bright column, not a diagonal.",
    ))

    with np.errstate(divide="ignore"):
        logs = np.log(full)
    trace = Trace(
        name="heatmap-reading",
        title="Reading a heatmap",
        section=11,
        inputs=inputs,
        steps=steps,
        result={"table": normalised, "alignment": align},
        fused={"table": softmax(logs, axis=1),
               "alignment": [source[int(j)] for j in np.argmax(softmax(logs, axis=1), axis=1)]},
        source=source_of(INPUTS, inputs, "notes"),
        summary="The notes' attention table for \"my feet hurt\" → \"j' ai mal au pieds\": its "
                "shape, its rows, and what it says about alignment.",
        heatmaps=[HeatmapData("Attention weights (rows: French, columns: English)", full,
                              list(target), list(source))],
    )
    if same_as_defaults(INPUTS, inputs):
        mal = full[target.index("mal")]
        trace.errata += [
            Erratum(
                where="§11 worked example, table",
                printed="\"Visualize as a 3×3 grid\", then a table with 4 rows (ai, mal, au, pieds)",
                computed=f"the table is {R} × {S}; the target has {len(target)} words, so the "
                         f"full table is {len(target)} × {S} (j' has no row)",
                why="The grid size was not updated after rows were added, and the j' row the "
                    "interpretation talks about is missing from the table.",
                kind="miscount", id="heatmap-shape"),
            Erratum(
                where="§11 sense-check",
                printed="\"the high weights … on 'hurt' for 'mal' confirm the alignment\"",
                computed=f"the table gives mal → feet {n(mal[1])}, hurt {n(mal[2])}",
                why="The sense-check contradicts the table (and the interpretation just above "
                    "it, which aligns mal with feet). In the table, hurt is ai's focus. "
                    "Linguistically \"avoir mal\" renders \"hurt\", so it is the table's "
                    "numbers that are invented, not a learned alignment.",
                kind="inconsistency", id="heatmap-mal-hurt"),
            Erratum(
                where="§11 table vs §4 example, row \"ai\"",
                printed="§11: ai → [0.1, 0.2, 0.7]; §4: ai → [0.2, 0.1, 0.7]",
                computed="the weights on my and feet are swapped between the two sections",
                why="Same example, two versions; the alignment (ai → hurt) is the same in both.",
                kind="inconsistency", id="ai-row-mismatch"),
            Erratum(
                where="§11 interpretation",
                printed="\"The strong diagonal from 'feet' to multiple French words\"",
                computed="feet's weights form a bright column (0.8, 0.9, 0.85 for mal, au, pieds)",
                why="A diagonal means word-for-word alignment in order; one source word feeding "
                    "several target words shows up as a vertical band.",
                kind="wording", id="heatmap-feet-diagonal"),
            Erratum(
                where="§11 target sentence",
                printed="j'ai mal au pieds",
                computed="j'ai mal aux pieds",
                why="French contracts à + les to aux before a plural noun; the tokens here keep "
                    "the notes' spelling so the table still matches.",
                kind="wording", id="french-aux"),
        ]
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: the notes' words with new weights (rows in steps of 0.05 summing to 1)."""
    target = ["j'", "ai", "mal", "au", "pieds"]
    return {"source": ["my", "feet", "hurt"], "target": target, "rows": target[1:],
            "weights": np.array([_draw.simplex(rng, 3, 0.05) for _ in range(4)]),
            "missing_rows": _draw.simplex(rng, 3, 0.1)[None, :]}
