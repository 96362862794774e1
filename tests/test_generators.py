"""Generated problems: every family's answers against naive NumPy references, 100 seeds each."""

from __future__ import annotations

import json
import math
import shlex

import numpy as np
import pytest

from tutor.quiz.generators import FAMILIES, generate
from tutor.quiz.generators import Part

SEEDS = range(100)


# ----------------------------------------------------------------------------- naive twins

def softmax(x):
    e = np.exp(np.asarray(x, float) - np.max(x))
    return e / e.sum()


def _close(got, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=0, atol=tol)


def ref_scaled_dot_scores(d, parts):
    q, K = d["q"], d["K"]
    scores = [sum(q[c] * k[c] for c in range(len(q))) / math.sqrt(len(q)) for k in K]
    _close(parts[0].answer, scores)
    assert parts[1].answer == f"K{int(np.argmax(scores)) + 1}"


def ref_softmax_weights(d, parts):
    _close(parts[0].answer, softmax(d["scores"]))


def ref_additive_score(d, parts):
    pre = d["W_q"] @ d["q"] + d["W_k"] @ d["k"]
    _close(parts[0].answer, float(np.dot(d["v"], np.tanh(pre))))


def ref_masked_softmax(d, parts):
    s, ok = d["scores"], d["allowed"]
    e = np.where(ok, np.exp(s - s[ok].max()), 0.0)
    _close(parts[0].answer, e / e.sum())
    assert all(a == 0.0 for a, keep in zip(parts[0].answer, ok) if not keep)


def ref_dot_variance(d, parts):
    # Var(q·k) = E[(q·k)²] = Σᵢⱼ E[qᵢqⱼ]E[kᵢkⱼ] = trace(C_q C_k) for independent zero-mean q, k
    C_q = d["var_q"] * np.eye(d["d_k"])
    C_k = d["var_k"] * np.eye(d["d_k"])
    var = float(np.trace(C_q @ C_k))
    _close(parts[0].answer, var)
    _close(parts[1].answer, var / d["d_k"])


def ref_context_vector(d, parts):
    C = np.zeros(d["H"].shape[1])
    for a, h in zip(d["alpha"], d["H"]):
        C += a * h
    _close(parts[0].answer, C)


def ref_self_attention_row(d, parts):
    X, i = d["X"], d["i"]
    Q, K, V = X @ d["W_Q"], X @ d["W_K"], X @ d["W_V"]
    a = softmax([Q[i] @ K[j] / math.sqrt(K.shape[1]) for j in range(len(X))])
    _close(parts[0].answer, a)
    _close(parts[1].answer, sum(a[j] * V[j] for j in range(len(X))))


def ref_pooling(d, parts):
    V, a = d["V"], d["alpha"]
    _close(parts[0].answer, max(V))
    _close(parts[1].answer, sum(V) / len(V))
    _close(parts[2].answer, sum(x * w for x, w in zip(V, a)))


def ref_beam_search(d, parts):
    first = dict(zip(("the", "a", "an", "some"), d["first"]))
    rows = {w: {"cat": c, "dog": g, "<other>": 1 - c - g} for w, (c, g) in d["after"].items()}
    beam = sorted(first, key=first.get, reverse=True)[:2]  # K = 2 survivors of step 1
    cands = {f"{w} {b}": math.log(first[w]) + math.log(p)
             for w in beam for b, p in rows[w].items() if p > 0}
    best = max(cands, key=cands.get)
    assert parts[0].answer == best
    _close(parts[1].answer, cands[best])
    top = max(first, key=first.get)
    assert parts[2].answer == f"{top} {max(rows[top], key=rows[top].get)}"


def ref_length_normalised_beam(d, parts):
    la, lb = np.log(d["A"]).sum(), np.log(d["B"]).sum()
    sa, sb = la / len(d["A"]) ** d["alpha"], lb / len(d["B"]) ** d["alpha"]
    assert parts[0].answer == ("A" if la > lb else "B")
    _close(parts[1].answer, sb)
    assert parts[2].answer == ("A" if sa > sb else "B")


def ref_top_k_set(d, parts):
    p, words, k = d["p"], d["words"], d["k"]
    kth = sorted(p, reverse=True)[k - 1]
    kept = {w for w, x in zip(words, p) if x >= kth - 1e-12}  # ties with the k-th kept
    assert parts[0].answer == kept
    mass = sum(x for w, x in zip(words, p) if w in kept)
    _close(parts[1].answer, max(p) / mass)


def ref_nucleus_set(d, parts):
    p, words, top_p = d["p"], d["words"], d["top_p"]
    kept, mass = set(), 0.0
    for i in sorted(range(len(p)), key=lambda i: -p[i]):
        if mass >= top_p:
            break
        kept.add(words[i])
        mass += p[i]
    assert parts[0].answer == kept
    _close(parts[1].answer, max(p) / mass)


def ref_temperature(d, parts):
    _close(parts[0].answer, softmax(np.asarray(d["z"]) / d["T"]))


def ref_cross_entropy_loss(d, parts):
    losses = [-math.log(d["P"][t][y]) for t, y in enumerate(d["targets"])]
    _close(parts[0].answer, sum(losses))
    _close(parts[1].answer, sum(losses) / len(losses))


def ref_cross_entropy_gradient(d, parts):
    # finite differences of L(z) = -log softmax(z)[y] at z = log P
    z, y, h = np.log(d["P"]), d["y"], 1e-6
    loss = lambda z: -math.log(softmax(z)[y])  # noqa: E731
    g = [(loss(z + h * e) - loss(z - h * e)) / (2 * h) for e in np.eye(len(z))]
    _close(parts[0].answer, g, tol=1e-6)
    _close(parts[0].answer, np.asarray(d["P"]) - np.eye(len(z))[y])


def ref_softmax_jacobian(d, parts):
    # central differences of α₁ = softmax(s)[0] with respect to s₁ and s_{j+1}
    s, j, h = np.asarray(d["scores"], float), d["j"], 1e-6
    e = np.eye(3)
    for part, k in ((0, 0), (1, j)):
        fd = (softmax(s + h * e[k])[0] - softmax(s - h * e[k])[0]) / (2 * h)
        _close(parts[part].answer, fd, tol=1e-8)


def _central(f, x, h=1e-6):
    """Central differences of the scalar f at x (any shape), entry by entry."""
    x = np.asarray(x, float)
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        out[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def ref_attention_backward(d, parts):
    # L = dO_i · O_i with O_i = Σ_j softmax(Q_i·K_j / √2)_j V_j; nudge Q_i and V_j
    Q, K, V, g, i, j = d["Q"], d["K"], d["V"], d["g"], d["i"], d["j"]

    def loss(q, V):
        return float(g @ (softmax([q @ k / math.sqrt(2) for k in K]) @ V))

    _close(parts[0].answer, [g @ V[m] for m in range(3)])  # ∂L/∂α_ij = dO_i · V_j
    _close(parts[1].answer, _central(lambda q: loss(q, V), Q[i]), tol=1e-8)

    def with_row(vj):
        W = V.copy()
        W[j] = vj
        return loss(Q[i], W)

    _close(parts[2].answer, _central(with_row, V[j]), tol=1e-8)


def ref_additive_backward(d, parts):
    q, K, V, W_q, W_k, v, g = (d[k] for k in ("q", "K", "V", "W_q", "W_k", "v", "g"))

    def from_scores(e):
        return float(g @ (softmax(e) @ V))

    def loss(q, v):
        return from_scores([v @ np.tanh(W_q @ q + W_k @ k) for k in K])

    e = [v @ np.tanh(W_q @ q + W_k @ k) for k in K]
    _close(parts[0].answer, _central(from_scores, e), tol=1e-8)
    _close(parts[1].answer, _central(lambda v: loss(q, v), v), tol=1e-8)
    _close(parts[2].answer, _central(lambda q: loss(q, v), q), tol=1e-8)


def ref_multi_head_cost(d, parts):
    n, dm, h = d["n"], d["d_model"], d["heads"]
    dk = dm // h
    quad = sum(2 * n * dk * n + 2 * n * n * dk for _ in range(h))  # Q_r K_rᵀ and α_r V_r
    linear = 3 * (2 * n * dm * dm) + 2 * n * dm * dm  # X W_Q, X W_K, X W_V, concat · W^O
    assert parts[0].answer == quad
    assert parts[1].answer == quad + linear
    assert parts[2].answer == ("self-attention" if n * n * dm < n * dm * dm else "recurrent")


def ref_rnn_step(d, parts):
    _close(parts[0].answer, np.tanh(d["W_hx"] @ d["x"] + d["W_hh"] @ d["h_prev"] + d["b"]))


def ref_fixed_context(d, parts):
    X, A, B = d["X"], d["W_HX"], d["W_HH"]
    h = np.zeros(2)
    states = []
    for x in X:  # H_t = tanh(W_HX x_t + W_HH h), written out
        h = np.array([math.tanh(A[r] @ x + B[r] @ h) for r in range(2)])
        states.append(h)
    _close(parts[0].answer, states[0])
    _close(parts[1].answer, states[2])


def ref_error_cascade(d, parts):
    vocab, fed = ("the", "a", "cat", "dog", "sat", "ran"), ("<s>", "the", "a", "cat", "dog")
    P = {f: dict(zip(vocab, row)) for f, row in zip(fed, d["table"])}
    target = ["the", "cat", "sat"]
    free = ["<s>"]
    for _ in range(2):
        free.append(max(vocab, key=lambda w: P[free[-1]][w]))
    assert parts[0].answer == free[2]
    _close(parts[1].answer, -sum(math.log(P[f][w]) for f, w in zip(["<s>", "the", "cat"], target)))
    _close(parts[2].answer, -sum(math.log(P[f][w]) for f, w in zip(free, target)))


def ref_multi_head_shapes(d, parts):
    dm, h, n = d["d_model"], d["heads"], d["n"]
    assert parts[0].answer == dm // h
    assert parts[1].answer == 4 * dm * dm  # W_Q, W_K, W_V, W^O: d_model × d_model each
    assert parts[2].answer == h * n * n


def ref_cross_attention_weights(d, parts):
    q, K = d["q"], d["K"]
    a = softmax([q @ k / math.sqrt(2) for k in K])
    _close(parts[0].answer, a)
    assert parts[1].answer == ("the", "black", "cat", "sleeps")[int(np.argmax(a))]


def ref_heatmap_reading(d, parts):
    row = d["W"][d["row"]]
    assert parts[0].answer == ("my", "feet", "hurt")[int(np.argmax(row))]
    _close(parts[1].answer, max(row) / (1 / 3))


def ref_distance_scores(d, parts):
    q, K = d["q"], d["K"]
    scores = [-sum((q[c] - k[c]) ** 2 for c in range(len(q))) for k in K]
    _close(parts[0].answer, scores)
    _close(parts[1].answer, softmax(scores))
    # without the −‖k‖² bias (and without −‖q‖², which no softmax sees): 2 q·k
    dots = [2 * sum(q[c] * k[c] for c in range(len(q))) for k in K]
    assert parts[2].answer == f"K{int(np.argmax(dots)) + 1}"


def ref_query_design(d, parts):
    q, K, V, a, b = d["q"], d["K"], d["V"], d["a"], d["b"]

    def output(query):
        w = softmax([query @ k / math.sqrt(2) for k in K])
        return w, sum(w[j] * V[j] for j in range(3))

    w, out = output(q)
    _close(parts[1].answer, w)
    _close(parts[2].answer, out)
    # the limit, by scaling the query up: the choice names the vector it approaches
    _, far = output(200 * q)
    named = {f"V{a + 1}": V[a], f"(V{a + 1} + V{b + 1}) / 2": (V[a] + V[b]) / 2,
             "(V1 + V2 + V3) / 3": V.mean(axis=0)}
    _close(far, named[parts[0].answer], tol=1e-6)
    assert parts[0].answer == (f"V{a + 1}" if d["design"] == "one" else f"(V{a + 1} + V{b + 1}) / 2")


REFERENCES = {name[4:].replace("_", "-"): fn for name, fn in globals().items()
              if name.startswith("ref_")}


def test_every_family_has_a_reference_and_there_are_at_least_12():
    assert set(REFERENCES) == set(FAMILIES)
    assert len(FAMILIES) >= 12


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_answers_match_naive_reference(family):
    for seed in SEEDS:
        problem = generate(family, seed)
        REFERENCES[family](problem.data, problem.parts)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_reproducible_and_varied(family):
    a, b = generate(family, 12345), generate(family, 12345)
    assert a == b and a.trace_command == b.trace_command
    prompts = {generate(family, s).prompt for s in range(10)}
    assert len(prompts) >= 5, "different seeds should give different numbers"


def _numbers(value):
    arr = np.asarray(value)
    return [] if arr.dtype.kind not in "fiu" else np.ravel(arr).tolist()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_numbers_are_hand_computable_and_shown(family):
    for seed in range(30):
        p = generate(family, seed)
        for key, value in p.data.items():
            for x in _numbers(value):
                assert abs(x * 100 - round(x * 100)) < 1e-6, f"{family} {key}={x}: > 2 decimals"
                assert abs(x) <= 512
        for part in p.parts:
            assert part.tolerance <= 0.02
            if part.kind in ("number", "vector") and part.tolerance == 0:
                assert all(float(v).is_integer() for v in np.ravel(part.answer))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_part_accepts_its_answer_and_rejects_a_wrong_one(family):
    for seed in range(20):
        for part in generate(family, seed).parts:
            right = _typed(part)
            v = part.check(right)
            assert v.valid and v.correct, (family, seed, part.prompt, right, v)
            wrong = _wrong(part)
            v = part.check(wrong)
            assert v.valid and v.correct is False, (family, seed, part.prompt, wrong, v)


def _typed(part: Part) -> str:
    if part.kind == "number":
        return f"{part.answer:.4f}"
    if part.kind == "vector":
        return ", ".join(f"{x:.4f}" for x in part.answer)
    if part.kind == "set":
        return " , ".join(sorted(part.answer, reverse=True))
    return part.answer.upper()


def _wrong(part: Part) -> str:
    off = part.tolerance + 0.05
    if part.kind == "number":
        return f"{part.answer + off:.4f}"
    if part.kind == "vector":
        return ", ".join(f"{x + (off if i == 0 else 0):.4f}" for i, x in enumerate(part.answer))
    if part.kind == "set":
        other = next(o for o in part.options if o not in part.answer)
        return ", ".join(sorted(part.answer | {other}))
    return next(o for o in part.options if o != part.answer)


def test_part_checking_tolerance_and_bad_input():
    p = Part("x?", "number", 0.5806, tolerance=0.01)
    assert p.check("0.58").correct and p.check("0.5906").correct
    assert p.check("0.592").correct is False
    assert p.check("7/12").correct  # 0.5833
    count = Part("FLOPs?", "number", 470400.0)
    assert count.check("470,400").correct and count.check("470400").correct
    assert count.check("470,401").correct is False
    for bad, hint in [("", "Type an answer"), ("abc", "Type a number"),
                      ("0,58", "decimal point"), ("0.5, 0.6", "single number")]:
        v = p.check(bad)
        assert not v.valid and hint in v.hint, (bad, v)

    vec = Part("w?", "vector", (0.316, 0.431, 0.253), tolerance=0.01)
    assert vec.check("[0.32, 0.43, 0.25]").correct
    assert vec.check("0.32 0.43 0.25").correct
    assert vec.check("0.32; 0.43; 0.26").correct
    assert vec.check("0.32, 0.43, 0.27").correct is False
    assert not vec.check("0.32, 0.43").valid and "this answer has 3" in vec.check("0.32, 0.43").hint
    assert not vec.check("0.3, x, 0.2").valid

    s = Part("set?", "set", frozenset({"cat", "dog"}), options=("cat", "dog", "mat"))
    assert s.check("dog, cat").correct and s.check("CAT dog cat").correct
    assert s.check("cat").correct is False
    assert not s.check("cat, cow").valid and "'cow'" in s.check("cat, cow").hint

    c = Part("which?", "choice", "a dog", options=("the cat", "a dog"))
    assert c.check("a  dog").correct and c.check("2").correct and c.check("1").correct is False
    assert not c.check("3").valid and not c.check("a horse").valid


def test_answer_text_states_tolerance():
    assert Part("x", "number", 0.25, tolerance=0.01).answer_text == "0.25 (±0.01)"
    assert "±0.02 each" in Part("x", "vector", (1.0, 2.0), tolerance=0.02).answer_text
    assert "anything within ±0.01 counts" in Part("x", "number", 1.0, tolerance=0.01).instructions


def test_unknown_family():
    with pytest.raises(ValueError, match="no generated family"):
        generate("nope", 1)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_trace_command_replays_the_problems_own_numbers(family):
    """The worked solution's command builds on these very numbers and reaches the answers.

    The command is parsed as the CLI parses ``--set`` and built with ``engine.traces.build``;
    every name must be one of the trace's INPUTS.
    """
    from engine.traces import build, input_specs
    from tutor.inputs import parse_value

    fam = FAMILIES[family]
    names = {s.name for s in input_specs(fam.trace)}
    for seed in range(5):
        problem = generate(family, seed)
        args = shlex.split(problem.trace_command)
        assert args[:3] == ["attn-tutor", "trace", fam.trace]
        overrides = {}
        for flag, item in zip(args[3::2], args[4::2]):
            assert flag == "--set"
            name, _, value = item.partition("=")
            overrides[name] = parse_value(value, name)
        assert set(overrides) <= names, f"unknown inputs {set(overrides) - names}"
        trace = build(fam.trace, overrides)
        assert trace.disagreements() == [], (family, seed)
        _assert_trace_answers(family, seed, problem, trace.result)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_trace_command_runs_in_the_cli_with_the_same_answers(family):
    """The very command a student copies, run through typer's CliRunner with --json."""
    from typer.testing import CliRunner

    from tutor.cli import app

    problem = generate(family, 7)
    args = shlex.split(problem.trace_command)
    out = CliRunner().invoke(app, args[1:] + ["--json"])
    assert out.exit_code == 0, (problem.trace_command, out.stdout, out.stderr)
    data = json.loads(out.stdout)
    assert data["agrees"] is True and data["source"] == "user"
    _assert_trace_answers(family, 7, problem, data["result"])


def _assert_trace_answers(family, seed, problem, result):
    for part, got in TRACE_AGREES[family](result, problem.data):
        want = problem.parts[part].answer
        if isinstance(want, (str, frozenset)):
            assert got == want, (family, seed, part)
        else:
            _close(got, want, tol=1e-9)


def test_every_family_is_checked_against_its_trace():
    # no family may fall back to "the trace shows the same computation on numbers of its own"
    assert set(TRACE_AGREES) == set(FAMILIES)
    for family in FAMILIES:
        assert "(The trace" not in " ".join(generate(family, 0).solution), family


def _kept(probs, words):
    return frozenset(w for w, x in zip(words, probs) if x > 0)


# family -> result, data -> [(part index, the trace's value for it)]
TRACE_AGREES = {
    "rnn-step": lambda r, d: [(0, r["H"][0])],
    "softmax-jacobian": lambda r, d: [(0, r["J"][0][0]), (1, r["J"][0][d["j"]])],
    "self-attention-row": lambda r, d: [(0, r["weights"]), (1, r["output"])],
    "scaled-dot-scores": lambda r, d: [(0, r["scores"])],
    "softmax-weights": lambda r, d: [(0, r["probs"][0])],
    "additive-score": lambda r, d: [(0, r["additive"])],
    "dot-variance": lambda r, d: [(0, r["exact"][-1]), (1, r["exact_scaled"][-1])],  # dims 1, d_k
    "context-vector": lambda r, d: [(0, r["contexts"][0])],
    "masked-softmax": lambda r, d: [(0, r["A"][d["row"]])],
    "length-normalised-beam": lambda r, d: [(0, r["raw_best"]), (1, r["normalised"][1]),
                                            (2, r["n_best"][0])],
    "pooling": lambda r, d: [(0, r["max"]), (1, r["mean"]), (2, r["attention"])],
    "beam-search": lambda r, d: [(0, r["beam"][0]), (1, r["beam_logps"][0]),
                                 (2, " ".join(r["greedy"]))],
    "top-k-set": lambda r, d: [(0, _kept(r["probs_top_k"], d["words"])),
                               (1, max(r["probs_top_k"]))],
    "nucleus-set": lambda r, d: [(0, _kept(r["probs_top_p"], d["words"])),
                                 (1, max(r["probs_top_p"]))],
    "temperature": lambda r, d: [(0, r["probs"][1])],  # rows: T = 1, then the problem's T
    "cross-entropy-loss": lambda r, d: [(0, r["L"])],
    "cross-entropy-gradient": lambda r, d: [(0, r["grad"][0])],
    "fixed-context": lambda r, d: [(0, r["H"][0]), (1, r["C"])],
    "error-cascade": lambda r, d: [(0, r["fed_free"][2]), (1, r["L_forced"]), (2, r["L_free"])],
    "multi-head-shapes": lambda r, d: [(1, r["params"]), (2, r["exponentials"])],
    "cross-attention-weights": lambda r, d: [(0, r["weights"][0]),
                                             (1, ("the", "black", "cat", "sleeps")[
                                                 int(np.argmax(r["weights"][0]))])],
    "heatmap-reading": lambda r, d: [(0, r["alignment"][d["row"]]),
                                     (1, 3 * max(r["table"][d["row"]]))],
    "attention-backward": lambda r, d: [(0, r["d_alpha"][d["i"]]), (1, r["dQ"][d["i"]]),
                                        (2, r["dV"][d["j"]])],
    "additive-backward": lambda r, d: [(0, r["d_scores"]), (1, r["dv"]), (2, r["dq"])],
    "distance-scores": lambda r, d: [(0, r["scores"]), (1, r["weights"]),
                                     (2, f"K{int(np.argmax(r['dot_weights'])) + 1}")],
    "query-design": lambda r, d: [(1, r["weights"]), (2, r["context"])],
    "multi-head-cost": lambda r, d: [(0, r["quadratic_flops"]), (1, r["flops"]),
                                     (2, ("self-attention", "recurrent")[
                                         int(r["operations"][0] > r["operations"][1])])],
}
