"""Decoding families (§10): beam search, length normalisation, top-k, nucleus, temperature.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from ``engine.decoding``.
"""

from __future__ import annotations

import numpy as np

from tutor.quiz.generators._base import Part
from tutor.quiz.generators.attention import simplex
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec

_FIRST = ("the", "a", "an", "some")
_SECOND = ("cat", "dog", "bird")
_TOKENS = ("cat", "dog", "mat", "sat", "the", "on")


def make_beam_search(rng: np.random.Generator) -> dict:
    """The lecture's table (§10) with fresh numbers: "the" and "a" lead after step 1, each is
    followed by cat / dog (the rest of its row is "<other>"), "an" and "some" by "<other>"."""
    # deferred: loads numba (start-up time)
    from engine.decoding import TableModel, beam_search, greedy_decode
    from engine.traces.lecture_beam import ROWS, VOCAB  # deferred: loads numba (start-up time)

    want_differ = rng.random() < 0.6  # usually greedy misses the beam's answer
    while True:
        first = simplex(rng, 4)  # P(the), P(a), P(an), P(some)
        if min(first[:2]) <= max(first[2:]) or first[0] == first[1]:
            continue  # "the" and "a" must be the two best first words, without a tie
        after = {}
        for w in ("the", "a"):  # P(cat), P(dog); the rest (0–0.15) is <other>
            rest = float(rng.choice([0.0, 0.05, 0.1, 0.15]))
            cat = float(grid(rng, 0.05, 0.95 - rest, 0.05))
            after[w] = np.round([cat, 1.0 - rest - cat], 6)
        rows: dict[tuple[str, ...], dict[str, float]] = {k: dict(v) for k, v in ROWS.items()}
        rows[("<s>",)] = dict(zip(_FIRST, first))
        for w, (cat, dog) in after.items():
            rows[(w,)] = {"cat": cat, "dog": dog, "<other>": round(1 - cat - dog, 6)}
        model = TableModel.from_rows(VOCAB, rows, bos="<s>", eos="</s>")
        beam = beam_search(model, beam_width=2, max_length=2)
        g = greedy_decode(model, max_length=2)
        greedy = g.hypothesis
        ranked = sorted((h.logp for h in beam.n_best), reverse=True)
        clear = len(ranked) < 2 or ranked[0] - ranked[1] > 0.02
        if (clear and not beam.ties and not any(st.tied for st in g.steps)
                and "<other>" not in beam.best.words and "<other>" not in greedy.words
                and (beam.best.words[:2] != greedy.words[:2]) == want_differ):
            break
    best = beam.best
    options = tuple(f"{a} {b}" for a in ("the", "a") for b in ("cat", "dog"))
    table = "\n".join(f"  after {w!r}: P(cat) = {num(c)}, P(dog) = {num(d)} "
                      f"(the rest of the row is other words)" for w, (c, d) in after.items())
    return dict(
        prompt=("Beam search with K = 2 over two words.\n  step 1: "
                + ", ".join(f"P({w}) = {num(p)}" for w, p in zip(_FIRST, first))
                + f"\n{table}\nScores are cumulative natural-log probabilities."),
        parts=(
            Part("(a) Which two-word sequence does beam search return?", "choice",
                 best.text, options=options),
            Part("(b) Its cumulative log-probability?", "number", float(best.logp), tolerance=0.01,
                 value="beam_logps[1]"),
            Part("(c) And what does greedy decoding return?", "choice",
                 " ".join(greedy.words[:2]), options=options),
        ),
        solution=(
            "Step 1 keeps the K = 2 best first words, 'the' and 'a'.",
            "Step 2: cum = ln P(w1) + ln P(w2 | w1) for every continuation; keep the best two.",
            "  " + ", ".join(f"{h.text}: {num(h.logp)}" for h in beam.n_best),
            f"Beam search returns {best.text!r}; greedy commits to the best first word and "
            f"returns {' '.join(greedy.words[:2])!r}.",
        ),
        trace_inputs={"first": first, "after_the": after["the"], "after_a": after["a"]},
        data={"first": first, "after": after},
    )


def make_length_normalised_beam(rng: np.random.Generator) -> dict:
    from engine.decoding.search import length_normalised_score  # deferred: loads numba (start-up time)

    alpha = float(rng.choice([0.5, 0.7, 1.0]))
    want_flip = rng.random() < 0.7  # usually normalisation changes the winner
    while True:
        pa = grid(rng, 0.3, 0.9, 0.1, 2)  # short hypothesis: 2 tokens (EOS included)
        pb = grid(rng, 0.5, 0.9, 0.1, 4)  # long hypothesis: 4 tokens (EOS included)
        la, lb = float(np.log(pa).sum()), float(np.log(pb).sum())
        sa = length_normalised_score(la, len(pa), ("hf", alpha))
        sb = length_normalised_score(lb, len(pb), ("hf", alpha))
        flip = (la > lb) != (sa > sb)
        if abs(la - lb) > 0.05 and abs(sa - sb) > 0.05 and flip == want_flip:
            break
    raw = "A" if la > lb else "B"
    norm = "A" if sa > sb else "B"
    return dict(
        prompt=(f"Two finished beam hypotheses (token probabilities, </s> included in L):\n"
                f"  A: {vec(pa)}   (L = {len(pa)})\n  B: {vec(pb)}   (L = {len(pb)})\n"
                f"Length normalisation: score = Σ ln p / L^α with α = {num(alpha)}."),
        parts=(
            Part("(a) Which wins on the raw sum of log-probabilities?", "choice", raw,
                 options=("A", "B")),
            Part("(b) B's length-normalised score?", "number", sb, tolerance=0.01, value="normalised[2]"),
            Part("(c) Which wins after length normalisation?", "choice", norm, options=("A", "B")),
        ),
        solution=(
            f"Σ ln p: A = {num(la)}, B = {num(lb)} → {raw} (raw sums favour short outputs)",
            f"normalised: A = {num(la)} / {len(pa)}^{num(alpha)} = {num(sa)}, "
            f"B = {num(lb)} / {len(pb)}^{num(alpha)} = {num(sb)} → {norm}",
            "(In the trace each hypothesis is a row of token probabilities; the 0s pad A to B's "
            "length.)",
        ),
        trace_inputs={"hypotheses": np.vstack([np.pad(pa, (0, len(pb) - len(pa))), pb]),
                      "length_penalty": "hf", "alpha": alpha},
        data={"A": pa, "B": pb, "alpha": alpha},
    )


def _probs_with_tokens(rng: np.random.Generator, n: int) -> tuple[np.ndarray, tuple[str, ...]]:
    p = simplex(rng, n)
    return p, _TOKENS[:n]


def make_top_k_set(rng: np.random.Generator) -> dict:
    from engine.decoding import filtered_probs  # deferred: loads numba (start-up time)

    n = 5
    k = int(rng.choice([2, 3]))
    want_tie = rng.random() < 0.3  # sometimes a tie with the k-th value: ties are kept
    while True:
        p, words = _probs_with_tokens(rng, n)
        s = np.sort(p)[::-1]
        tie = abs(s[k - 1] - s[k]) < 1e-9
        if tie == want_tie:
            break
    q = filtered_probs(np.log(p), top_k=k)  # (n,) renormalised over the kept tokens
    kept = frozenset(w for w, x in zip(words, q) if x > 0)
    top = int(np.argmax(p))
    return dict(
        prompt=("Next-token probabilities: " + ", ".join(f"P({w}) = {num(x)}" for w, x in zip(words, p))
                + f".\nTop-k filtering with k = {k} (tokens tied with the k-th are kept)."),
        parts=(
            Part("(a) Which tokens are kept?", "set", kept, options=words),
            Part(f"(b) The renormalised probability of {words[top]!r}?", "number",
                 float(q[top]), tolerance=0.01, value=f"probs_top_k[{top + 1}]"),
        ),
        solution=(
            "Sorted: " + ", ".join(f"{words[i]} {num(p[i])}" for i in np.argsort(-p, kind="stable")),
            "kept: {" + ", ".join(w for w in words if w in kept) + "}"
            + f", total mass {num(sum(x for w, x in zip(words, p) if w in kept))}",
            f"renormalised: {vec(q)}",
        ),
        trace_inputs={"words": list(words), "probs": p, "k": k},
        data={"p": p, "words": words, "k": k},
    )


def make_nucleus_set(rng: np.random.Generator) -> dict:
    from engine.decoding import filtered_probs  # deferred: loads numba (start-up time)

    n = 5
    top_p = float(rng.choice([0.5, 0.6, 0.7, 0.75, 0.8, 0.9]))
    while True:
        p, words = _probs_with_tokens(rng, n)
        s = np.sort(p)[::-1]
        prefix = np.cumsum(s)
        # no prefix exactly at p (paper and float disagree there), no tie at the boundary
        if np.all(np.abs(prefix - top_p) > 1e-6) and len(set(p)) == n:
            break
    q = filtered_probs(np.log(p), top_p=top_p)  # (n,)
    kept = frozenset(w for w, x in zip(words, q) if x > 0)
    top = int(np.argmax(p))
    order = np.argsort(-p)
    running = np.cumsum(p[order])
    return dict(
        prompt=("Next-token probabilities: " + ", ".join(f"P({w}) = {num(x)}" for w, x in zip(words, p))
                + f".\nNucleus (top-p) sampling with p = {num(top_p)}: the smallest set of most "
                "probable tokens whose total probability reaches p."),
        parts=(
            Part("(a) Which tokens are in the nucleus?", "set", kept, options=words),
            Part(f"(b) The renormalised probability of {words[top]!r}?", "number",
                 float(q[top]), tolerance=0.01, value=f"probs_top_p[{top + 1}]"),
        ),
        solution=(
            "cumulative: " + ", ".join(f"{words[i]} {num(c)}" for i, c in zip(order, running)),
            "nucleus: {" + ", ".join(w for w in words if w in kept) + "} (the token that "
            f"crosses p = {num(top_p)} is kept)",
            f"renormalised: {vec(q)}",
        ),
        trace_inputs={"words": list(words), "probs": p, "p": top_p},
        data={"p": p, "words": words, "top_p": top_p},
    )


def make_temperature(rng: np.random.Generator) -> dict:
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    z = grid(rng, -1, 2, 0.5, 3)
    T = float(rng.choice([0.5, 2.0]))
    w = softmax(z, temperature=T)
    plain = softmax(z)
    return dict(
        prompt=f"Logits z = {vec(z)}. Sample with temperature T = {num(T)}: P = softmax(z / T).",
        parts=(Part.vector("P (three numbers, in order)?", w, tolerance=0.01, value="probs[2]"),),
        solution=(
            f"z / T = {vec(z / T)}",
            f"P = softmax(z / T) = {vec(w)}",
            f"(at T = 1 it would be {vec(plain)}: T < 1 sharpens, T > 1 flattens)",
        ),
        trace_inputs={"words": ["w1", "w2", "w3"], "logits": z, "temperatures": [1.0, T]},
        data={"z": z, "T": T},
    )
