"""Makers for decoding and heatmap questions (§10–11). Every answer comes from the engine."""

from __future__ import annotations

import numpy as np

from tutor.exam.numbers import Numbers, Step, Value, as_tuple, maker, one
from tutor.marking import Link
from tutor.quiz.generators import generate
from tutor.quiz.generators.attention import simplex
from tutor.quiz.generators.revision import heatmap_table
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec


@maker("beam")
def beam(rng: np.random.Generator) -> Numbers:
    # deferred: loads numba (start-up time)
    from engine.decoding import TableModel, beam_search, greedy_decode
    from engine.decoding.search import length_normalised_score  # deferred: loads numba (start-up time)
    from engine.traces.lecture_beam import ROWS, VOCAB  # deferred: loads numba (start-up time)

    while True:  # the quiz family's tables, until greedy and beam disagree (the point here)
        d = generate("beam-search", int(rng.integers(0, 2**31))).data
        first = dict(zip(("the", "a", "an", "some"), d["first"]))
        rows: dict[tuple[str, ...], dict[str, float]] = {k: dict(v) for k, v in ROWS.items()}
        rows[("<s>",)] = first
        for w, (c, g) in d["after"].items():
            rows[(w,)] = {"cat": c, "dog": g, "<other>": round(1 - c - g, 6)}
        model = TableModel.from_rows(VOCAB, rows, bos="<s>", eos="</s>")
        greedy = greedy_decode(model, max_length=2).hypothesis
        best = beam_search(model, beam_width=2, max_length=2).best
        g_words, b_words = greedy.words[:2], best.words[:2]
        if g_words != b_words:
            break
    alpha = float(rng.choice([0.6, 0.7, 1.0]))
    norm = length_normalised_score(float(best.logp), 2, ("hf", alpha))
    run = {"first": d["first"], "after_the": d["after"]["the"], "after_a": d["after"]["a"]}
    # A finished one-word hypothesis that beats (b) on the raw sum but loses once both are
    # normalised: the point of comparing two lengths. Drawn on a 0.01 grid strictly between.
    lo, hi = float(best.logp), float(norm)
    short = round(lo + (hi - lo) * float(rng.uniform(0.3, 0.7)), 2)
    short_norm = length_normalised_score(short, 1, ("hf", alpha))

    def normalised_pair(logp_two: float) -> tuple[float, float]:
        return (short_norm, length_normalised_score(logp_two, 2, ("hf", alpha)))

    def lines(words):
        return ", ".join(f"P({w}) = {num(p)}" for w, p in words)

    after = "\n".join(f"  after {w!r}: P(cat) = {num(c)}, P(dog) = {num(g)}"
                      for w, (c, g) in d["after"].items())
    return Numbers(
        fields={"first": lines(first.items()), "after": after, "alpha": num(alpha),
                "short": num(short)},
        steps={
            "greedy": Step(float(greedy.logp), 0.01, (f"greedy: {' '.join(g_words)}, "
                                                      f"ln P = {num(float(greedy.logp))}",),
                           link=Link("greedy-vs-beam", "greedy_logp", run)),
            "beam": Step(float(best.logp), 0.01, (f"beam (K = 2) best: {' '.join(b_words)}, "
                                                 f"ln P = {num(float(best.logp))}",),
                         link=Link("greedy-vs-beam", "beam_logps[1]", run)),
            "norm": Step(normalised_pair(float(best.logp)), 0.01, (
                f"one word: {num(short)} / 1^{num(alpha)} = {num(short_norm)}",
                f"two words: {num(float(best.logp))} / 2^{num(alpha)} = {num(float(norm))}",
                f"raw sums prefer the one-word hypothesis ({num(short)} > {num(float(best.logp))}); "
                f"normalised, the two-word one wins ({num(float(norm))} > {num(short_norm)})"),
                ("beam",), lambda v: normalised_pair(one(v["beam"]))),
        },
        data={"greedy": g_words, "beam": b_words, "short": short, "alpha": alpha})


@maker("sampling")
def sampling(rng: np.random.Generator) -> Numbers:
    from engine.decoding import filtered_probs  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    words = ("cat", "dog", "mat", "hat", "bat")
    while True:
        p = simplex(rng, 5)
        if len(set(p)) == 5:
            break
    k = int(rng.integers(2, 4))
    top_p = float(rng.choice([0.6, 0.7, 0.8, 0.9]))
    logp = np.log(p)
    pk = filtered_probs(logp, top_k=k)
    pp = filtered_probs(logp, top_p=top_p)
    z = np.round(rng.integers(-4, 5, size=3) * 0.5, 6)

    def top_of_kept(size: Value) -> float:
        """The top word's probability renormalised over the ``size`` most likely words."""
        n = size if isinstance(size, float) else float("nan")  # a list is not a count
        if not 1 <= n <= len(p) or n != int(n):
            raise ValueError(f"{n:g} is not a count of words")
        return float(filtered_probs(logp, top_k=int(n)).max())

    T = float(rng.choice([0.5, 2.0]))
    top = int(np.argmax(p)) + 1
    pick = {"words": list(words), "probs": p}

    def kept_top(size: Value) -> Link:
        """The top word renormalised over the student's own count of words (top-k)."""
        if not isinstance(size, float) or size != int(size) or not 1 <= size <= len(p):
            raise ValueError(f"{size!r} is not a count of words")
        return Link("top-k", f"probs_top_k[{top}]", {**pick, "k": int(size)})

    return Numbers(
        fields={
            "p": ", ".join(f"P({w}) = {num(x)}" for w, x in zip(words, p)),
            "k": str(k),
            "top_p": num(top_p),
            "z": vec(z),
            "T": num(T),
        },
        steps={
            "topk": Step(
                float(pk.max()),
                0.01,
                (
                    f"keep the {k} largest, renormalise: top word "
                    f"{num(p.max())} / {num(float(p[pk > 0].sum()))} = "
                    f"{num(float(pk.max()))}",
                ),
                link=Link("top-k", f"probs_top_k[{top}]", {**pick, "k": k}),
            ),
            "nucleus_size": Step(
                float((pp > 0).sum()),
                0.0,
                (
                    f"add from the top until the mass reaches {num(top_p)}: {int((pp > 0).sum())} words "
                    f"(mass {num(float(p[pp > 0].sum()))})",
                ),
                link=Link("nucleus", "nucleus_size", {**pick, "p": top_p}),
            ),
            "nucleus_top": Step(
                float(pp.max()),
                0.01,
                (f"renormalised top probability: {num(float(pp.max()))}",),
                ("nucleus_size",),
                lambda v: top_of_kept(v["nucleus_size"]),
                link=Link("nucleus", f"probs_top_p[{top}]", {**pick, "p": top_p}),
                relink=lambda v: kept_top(v["nucleus_size"]),
            ),
            "temp": Step(
                as_tuple(softmax(z, temperature=T)),
                0.01,
                (f"softmax(z / {num(T)}) = {vec(softmax(z, temperature=T))}",),
                link=Link(
                    "temperature",
                    "probs[2]",
                    {"words": ["z1", "z2", "z3"], "logits": z, "temperatures": [1.0, T]},
                ),
            ),
        },
        data={"p": p, "k": k, "top_p": top_p},
    )


def step_value(trace, name: str):
    """The value ``name`` from the first step of ``trace`` that shows it."""
    return next(s.values[name] for s in trace.steps if name in s.values)


@maker("heatmap")
def heatmap(rng: np.random.Generator) -> Numbers:
    from engine.traces import build  # looked up per call: tests replace it

    source, target, W = heatmap_table(rng)
    trace = build("heatmap-reading", {"source": source, "target": target, "rows": target[1:],
                                      "weights": W[1:], "missing_rows": W[:1]})
    table = np.asarray(trace.result["table"])  # (5, 3)
    align = tuple(float(source.index(w) + 1) for w in trace.result["alignment"])
    ent = np.asarray(step_value(trace, "entropy_bits"))
    r = int(rng.integers(0, 5))
    c = int(np.argmax(table[r]))
    rows = "\n".join(f"  {w:<6}" + "".join(f"{num(x):>7}" for x in row) for w, row in zip(target, table))
    head = "        " + "".join(f"{w:>7}" for w in source)
    return Numbers(
        fields={"table": head + "\n" + rows, "row": target[r]},
        steps={
            "align": Step(
                align,
                0.0,
                (
                    "the largest entry of each row: columns "
                    + vec(align, 0)
                    + " → "
                    + ", ".join(trace.result["alignment"]),
                ),
            ),
            "ratio": Step(
                float(table[r, c] * 3),
                0.01,
                (
                    f"uniform weight is 1/3; {num(table[r, c])} × 3 = "
                    f"{num(float(table[r, c] * 3))} times that",
                ),
            ),
            "entropy": Step(
                float(ent[r]),
                0.01,
                (
                    f"H = −Σ α log₂ α over the {target[r]!r} row = "
                    f"{num(ent[r])} bits "
                    f"(log₂ 3 ≈ 1.585 is the most spread out)",
                ),
                link=Link(
                    "heatmap-reading",
                    f"entropy_bits[{r + 1}]",
                    {
                        "source": source,
                        "target": target,
                        "rows": target[1:],
                        "weights": W[1:],
                        "missing_rows": W[:1],
                    },
                ),
            ),
        },
        data={"table": table, "row": r},
    )
