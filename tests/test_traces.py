"""Every trace: builds from the notes' defaults, agrees with the fused engine functions,
serialises to the documented JSON, and gets the worked examples' numbers right.

Expected values come from the notes (where they are right), from hand calculation with
``math``, or from short independent NumPy — never from the traces' own output.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from engine.trace import InputSpec, coerce_inputs, same_as_defaults
from engine.traces import REGISTRY, build, get_info, input_specs, list_traces

NAMES = list(REGISTRY)
TOP_KEYS = {"schema", "name", "title", "section", "source", "summary", "inputs", "steps", "result",
            "fused", "agrees", "errata", "heatmaps"}
STEP_KEYS = {"index", "title", "formula", "substitution", "values", "note"}


def softmax(x):
    e = np.exp(np.asarray(x, float) - np.max(x))
    return e / e.sum()


@pytest.fixture(scope="module")
def traces():
    return {name: build(name) for name in NAMES}


def test_registry_has_the_names_of_the_issues():
    assert NAMES == [
        "encoder", "decoder-step", "bottleneck", "teacher-forcing", "error-cascade",
        "dynamic-context", "qkv",
        "self-attention", "scores", "cross-attention", "scoring-compare", "scaling", "masking",
        "additive-backward", "softmax-jacobian", "distance-scores", "multi-head", "multi-head-cost",
        "positional-encoding", "pooling", "greedy-vs-beam", "beam-search", "top-k",
        "nucleus", "temperature", "heatmap-reading", "cross-entropy", "training-step",
        "attention-backward"]
    assert [t.section for t in list_traces()] == sorted(t.section for t in list_traces())


@pytest.mark.parametrize("name", NAMES)
def test_defaults_build_and_agree_with_the_fused_functions(traces, name):
    t = traces[name]
    assert t.name == name and t.section == get_info(name).section
    assert t.fused, "every trace checks itself against a one-call engine function"
    assert t.disagreements() == []
    assert len(t.steps) >= 4
    for step in t.steps:
        assert step.title and step.formula and step.substitution and step.note
    assert t.source in ("notes", "notes+built", "built")
    assert t.summary


@pytest.mark.parametrize("name", NAMES)
def test_json_round_trips_with_the_documented_keys(traces, name):
    data = json.loads(json.dumps(traces[name].to_dict(), allow_nan=False))
    assert set(data) == TOP_KEYS
    assert data["name"] == name and data["agrees"] is True
    assert [s["index"] for s in data["steps"]] == list(range(1, len(data["steps"]) + 1))
    for step in data["steps"]:
        assert set(step) == STEP_KEYS
    for e in data["errata"]:
        assert set(e) == {"id", "where", "printed", "computed", "why", "kind"}
        # a rounding difference the notes state is a step note, never an erratum
        assert e["kind"] in ("arithmetic", "miscount", "inconsistency", "wording", "claim")
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", e["id"]), e
    for h in data["heatmaps"]:
        assert len(h["weights"]) == len(h["rows"]) and len(h["weights"][0]) == len(h["cols"])


@pytest.mark.parametrize("name", NAMES)
def test_every_default_input_is_accepted_back(name):
    specs = input_specs(name)
    values = coerce_inputs(specs, {})
    assert same_as_defaults(specs, values)


WEIGHT_TRACES = ["dynamic-context", "qkv", "self-attention", "scores", "cross-attention", "masking",
                 "scaling",
                 "multi-head", "pooling", "heatmap-reading", "training-step", "top-k", "nucleus",
                 "temperature"]


@pytest.mark.parametrize("name", WEIGHT_TRACES)
def test_attention_weights_come_with_labelled_heatmaps(traces, name):
    hm = traces[name].heatmaps
    assert hm
    for h in hm:
        w = np.asarray(h.weights)
        assert w.shape == (len(h.row_labels), len(h.col_labels))
        assert np.all(w >= 0) and np.allclose(w.sum(axis=1)[w.sum(axis=1) > 0], 1.0)


# --------------------------------------------------------------------------- §1–§3


def test_encoder_matches_the_notes_and_hand_tanh(traces):
    t = traces["encoder"]
    X = [[0.5, 0.1, -0.3, 0.2], [0.2, -0.4, 0.1, 0.5], [-0.1, 0.3, 0.4, -0.2]]
    h = [0.0, 0.0, 0.0]
    for x in X:
        h = [math.tanh(x[i] + 0.5 * h[i]) for i in range(3)]
    assert np.allclose(t.result["C"], h)
    assert np.allclose(t.result["H"][0], [math.tanh(0.5), math.tanh(0.1), math.tanh(-0.3)])
    assert np.array_equal(np.round(t.result["C"], 2), [0.10, 0.13, 0.36])  # the notes' C
    # every printed number checks out, W_HH H_2 = [0.20, -0.17, -0.02] included: it is half the
    # unrounded H_2 (0.5 · tanh(0.43), …) rounded; halving the printed H_2 rounds twice
    assert t.errata == []
    half = [0.5 * math.tanh(0.2 + 0.5 * math.tanh(0.5)), 0.5 * math.tanh(-0.4 + 0.5 * math.tanh(0.1)),
            0.5 * math.tanh(0.1 + 0.5 * math.tanh(-0.3))]
    assert [round(x, 2) for x in half] == [0.20, -0.17, -0.02]
    assert "[0.20, -0.17, -0.02] is right" in t.steps[2].note and "[0.21, -0.17, -0.03]" in t.steps[2].note
    assert "four rows of three" in t.steps[0].note and "three rows of four" not in t.steps[0].note
    note = t.steps[-1].note
    assert "[0.41, -0.34, -0.04]" in note and "[0.11, 0.13, 0.35]" in note


def test_encoder_errata_disappear_with_other_inputs():
    t = build("encoder", {"b": [0.1, 0, 0]})
    assert t.errata == [] and t.source == "user"
    assert math.isclose(t.result["H"][0][0], math.tanh(0.6))


def test_decoder_step_recomputes_by_hand(traces):
    t = traces["decoder-step"]
    w = t.steps[0].values
    C, h_prev = np.array([0.10, 0.13, 0.36]), np.zeros(3)
    y = w["Y_prev"]
    h = np.tanh(w["W_HH"] @ h_prev + w["W_HY"] @ y + w["W_HC"] @ C + w["b"])
    probs = softmax(w["W_O"] @ h)
    assert np.allclose(t.result["probs"], probs)
    assert t.result["prediction"] == ["le", "chat", "assis", "<eos>"][int(np.argmax(probs))]
    assert y[0] == 1 and y.sum() == 1  # <start> is fed first


def test_decoder_step_prev_token_changes_the_state():
    a, b = build("decoder-step"), build("decoder-step", {"prev": "chat"})
    assert not np.allclose(a.result["H"], b.result["H"])
    with pytest.raises(ValueError, match=r"^input prev: got 'dog', expected one of the vocabulary"):
        build("decoder-step", {"prev": "dog"})


def test_bottleneck_counts_17_words_and_prefers_recent_ones(traces):
    t = traces["bottleneck"]
    assert t.result["T"] == 17
    (e,) = t.errata
    assert e.kind == "miscount" and "19" in e.printed and e.computed == "17 words"
    infl = t.result["influence"]
    assert infl[-1] > infl[-5] > infl[0]
    reach = t.steps[2].values["reach_of_first_word"]
    assert reach[-1] < reach[0] / 100
    other = build("bottleneck", {"review": "not recommended terrible product"})
    assert other.errata == [] and other.result["T"] == 4


def _tf_loss(params, C, fed, targets):
    """Independent forward pass of the §1 decoder (H₀ = C), summed −log P(target)."""
    W_HH, W_HY, W_HC, b, W_O = params
    h, total = C, 0.0
    for tok, y in zip(fed, targets):
        x = np.zeros(W_HY.shape[1])
        x[tok] = 1.0
        h = np.tanh(W_HH @ h + W_HY @ x + W_HC @ C + b)
        z = W_O @ h
        total += math.log(np.exp(z - z.max()).sum()) + z.max() - z[y]
    return total


def _tf_start(seed=74, d_h=4, V=7):
    rng = np.random.default_rng(seed)  # the trace's Draw: N(0, scale²) rounded to 1 decimal
    draw = lambda *shape, scale=0.5: np.round(rng.normal(0.0, scale, size=shape), 1) + 0.0  # noqa: E731
    C = draw(d_h)
    return C, [draw(d_h, d_h), draw(d_h, V + 1, scale=1.0), draw(d_h, d_h), draw(d_h, scale=0.1),
               draw(V, d_h, scale=1.0)]


def _fd_grad(params, f, eps=1e-6):
    out = []
    for k, P in enumerate(params):
        g = np.zeros_like(P)
        for idx in np.ndindex(P.shape):
            up = [q.copy() for q in params]
            down = [q.copy() for q in params]
            up[k][idx] += eps
            down[k][idx] -= eps
            g[idx] = (f(up) - f(down)) / (2 * eps)
        out.append(g)
    return out


def test_teacher_forcing_untrained_decoder_is_the_contrast(traces):
    t = traces["teacher-forcing"]
    target = ["The", "cat", "sat"]
    # free running feeds its own guesses; the first one is "A", as in the notes' story
    assert t.result["fed_free_before"] == ["<start>"] + t.result["predicted_free_before"][:-1]
    assert t.result["predicted_free_before"][0] == "A"
    # untrained, even the correct prefix does not make "sat" likely
    assert t.result["predicted_forced_before"][-1] != "sat"
    assert t.result["p_last_forced_before"] < 0.01
    # after teacher-forced training the reference prefix gives the reference words
    assert t.result["predicted_forced_after"] == target
    assert t.result["generated_forced"] == target
    p = t.result["p_target_forced_after"]
    assert p[-1] > 0.8 and np.all(p > 0.8)
    assert t.result["loss_forced_after"] < t.result["loss_forced_before"] / 10
    # same start, same updates: free running has not learned the sentence yet
    assert t.result["generated_free"] != target
    assert t.result["loss_generated_free"] > t.result["loss_generated_forced"]
    (e,) = t.errata
    assert "5" in e.printed and "7 output words" in e.computed and e.id == "tf-vocabulary-size"


def test_teacher_forcing_gradient_matches_finite_differences():
    from engine.traces.teacher_forcing import NAMES, loss_and_grad

    C, params = _tf_start()
    fed, targets = [0, 1, 3], [0, 2, 4]  # <start> The cat → The cat sat
    loss, grad = loss_and_grad(dict(zip(NAMES, params)), C, fed, targets)
    assert loss == pytest.approx(_tf_loss(params, C, fed, targets), rel=1e-12)
    fd = _fd_grad(params, lambda q: _tf_loss(q, C, fed, targets))
    for name, g in zip(NAMES, fd):
        np.testing.assert_allclose(grad[name], g, atol=1e-7, err_msg=name)


def test_teacher_forcing_loss_curve_by_independent_training(traces):
    """Ten steps of gradient descent with finite-difference gradients reproduce the curve."""
    t = traces["teacher-forcing"]
    C, params = _tf_start()
    fed, targets = [0, 1, 3], [0, 2, 4]
    f = lambda q: _tf_loss(q, C, fed, targets)  # noqa: E731
    curve = [f(params)]
    for _ in range(t.inputs["train_steps"]):
        params = [q - t.inputs["lr"] * g for q, g in zip(params, _fd_grad(params, f))]
        curve.append(f(params))
    np.testing.assert_allclose(t.result["losses_forced"], curve, rtol=1e-6)


# --------------------------------------------------------------------------- §4–§7


def test_dynamic_context_is_the_weighted_sum_of_states(traces):
    t = traces["dynamic-context"]
    X = t.steps[0].values["X"]
    H, h = [], np.zeros(3)
    for x in X:  # the §1 encoder: W_HX = [I | 0], W_HH = 0.5 I
        h = np.tanh(x[:3] + 0.5 * h)
        H.append(h)
    alpha = np.array([[0.6, 0.3, 0.1], [0.2, 0.1, 0.7], [0.1, 0.8, 0.1]])
    assert np.allclose(t.result["contexts"], alpha @ np.array(H))
    kinds = sorted(e.kind for e in t.errata)
    assert kinds == ["inconsistency", "wording"]
    assert any("[my 0.1, feet 0.2, hurt 0.7]" in e.printed for e in t.errata)


def test_dynamic_context_takes_encoder_states_of_your_own():
    H = [[0.5, -0.1], [0.3, 0.9], [-1.0, 0.0]]
    t = build("dynamic-context", {"source": "a b c", "target": "y", "weights": [[0.2, 0.35, 0.45]],
                                  "H": H, "d_h": 7})
    # by hand: 0.2·[0.5, -0.1] + 0.35·[0.3, 0.9] + 0.45·[-1, 0] = [0.1 + 0.105 - 0.45, -0.02 + 0.315]
    assert np.allclose(t.result["contexts"], [[-0.245, 0.295]])
    assert t.disagreements() == [] and t.source == "user" and t.errata == []
    assert "X" not in t.steps[0].values and "not used" in t.steps[0].note
    assert np.array_equal(t.inputs["H"], H)
    # the notes' weights keep their errata whatever the states are
    own_states = build("dynamic-context", {"H": [[1, 0], [0, 1], [1, 1]]})
    assert sorted(e.kind for e in own_states.errata) == ["inconsistency", "wording"]
    assert np.allclose(own_states.result["contexts"][0], [0.6 + 0.1, 0.3 + 0.1])
    with pytest.raises(ValueError, match=r"^input H: has T = 2 \(shape \(2, 2\)\), but source has "
                                         r"T = 3; expected shape \(T, d_h\) with the same T$"):
        build("dynamic-context", {"H": [[1, 0], [0, 1]]})


def test_dynamic_context_defaults_leave_h_unset(traces):
    t = traces["dynamic-context"]
    assert t.source == "notes+built" and "H" not in t.inputs


def test_dynamic_context_rejects_rows_that_are_not_distributions():
    with pytest.raises(ValueError, match=r"^input weights: row 1 \(j'\) sums to 1.5"):
        build("dynamic-context", {"weights": [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]})


def test_qkv_softmax_and_erratum(traces):
    t = traces["qkv"]
    e1 = math.exp(1 / math.sqrt(3))
    expected = [e1 / (e1 + 2), 1 / (e1 + 2), 1 / (e1 + 2)]
    assert np.allclose(t.result["weights"], expected)
    assert np.allclose(t.result["output"], expected[:2])
    assert np.allclose(t.result["query"], [0, 1, 0])
    soft, out = t.errata
    assert "0.64" in soft.printed and "0.471, 0.264, 0.264" in soft.computed
    assert "[0.64, 0.18]" in out.printed and "[0.471, 0.264]" in out.computed
    assert (soft.id, out.id) == ("qkv-weights", "qkv-output")
    # e^0.58 ≈ 1.79 is right for the score the notes round to 0.58: a step note, not an erratum
    note = t.steps[5].note
    assert f"{math.exp(0.58):.3f}" == "1.786" and "1.786" in note and f"{e1:.3f}" in note


def test_qkv_override_changes_every_number_and_drops_the_erratum():
    W_V = [[0, 1], [1, 0], [0, 0], [0, 0]]
    t = build("qkv", {"W_V": W_V})
    e1 = math.exp(1 / math.sqrt(3))
    assert np.allclose(t.result["output"], [1 / (e1 + 2), e1 / (e1 + 2)])
    assert t.errata == [] and t.source == "user"
    t3 = build("qkv", {"position": 3})
    assert np.allclose(t3.result["weights"], [1 / (e1 + 2), 1 / (e1 + 2), e1 / (e1 + 2)])
    assert t3.errata == []


def test_self_attention_rows(traces):
    t = traces["self-attention"]
    e1 = math.exp(1 / math.sqrt(3))
    a, b = e1 / (e1 + 2), 1 / (e1 + 2)
    assert np.allclose(t.result["A"], [[b, a, b], [a, b, b], [b, b, a]])
    assert t.steps[-1].values["focus"] == ["love", "I", "cats"]
    assert len(t.errata) == 1


def test_scores_match_the_notes_weights_and_the_rounding_note(traces):
    t = traces["scores"]
    s = [-0.01 / math.sqrt(2), 0.43 / math.sqrt(2), -0.32 / math.sqrt(2)]
    assert np.allclose(t.result["scores"], s)
    # the notes print 0.316, 0.431, 0.253; exactly, α₃ = 0.25351 rounds to 0.254
    assert np.array_equal(np.round(t.result["weights"], 3), [0.316, 0.431, 0.254])
    # 0.305 and 0.253 follow from the notes' stated √2 ≈ 1.41: a rounding note, not an erratum
    assert t.errata == []
    assert round(0.43 / 1.41, 3) == 0.305 and round(0.797 / 3.147, 3) == 0.253
    note = t.steps[0].note
    assert "score₂ 0.305 there, 0.304 here" in note and "α₃ 0.253 there, 0.254 here" in note
    assert "α₁" not in note and "α₂" not in note  # those two match the notes
    assert "not an error" in note


def test_cross_attention_spotlight_and_token_count(traces):
    t = traces["cross-attention"]
    w = t.result["weights"]
    assert math.isclose(w[0][4], 0.85) and math.isclose(w[0][1], 0.05)
    assert np.allclose(np.delete(w[0], [1, 4]), 0.0125)
    assert np.allclose(w[1], 0.1)
    H = t.steps[1].values["V"]
    assert np.allclose(t.result["contexts"], w @ H)
    miscount = next(e for e in t.errata if e.kind == "miscount")
    assert "H₆" in miscount.printed and "H₅" in miscount.computed


# --------------------------------------------------------------------------- §8–§9


def test_scoring_compare_matches_the_notes(traces):
    t = traces["scoring-compare"]
    assert math.isclose(t.result["scaled"], 1 / math.sqrt(3))
    add = 2 * math.tanh(1) + math.tanh(-2)
    assert math.isclose(t.result["additive"], add)
    assert round(t.result["scaled"], 2) == 0.58 and round(add, 2) == 0.56
    assert t.errata == []


def test_scaling_variance_grows_with_d_k(traces):
    t = traces["scaling"]
    mc = t.result["monte_carlo"]
    assert np.allclose(mc, [1, 4, 16, 64, 256], rtol=0.1)
    assert np.allclose(t.steps[2].values["monte_carlo_scaled"], 1, rtol=0.1)
    assert t.result["weights_raw"].max() > 0.999 > 0.9 > t.result["weights_scaled"].max()
    v = t.steps[-1].values
    assert v["grad_norm_raw"] < v["grad_norm_scaled"] / 100


def test_scaling_takes_the_entry_variances():
    # Var(q·k) = d_k·σ_q²·σ_k² by hand: 1·0.5·4 = 2 and 64·0.5·4 = 128; scaled: 2 for both
    t = build("scaling", {"dims": [1, 64], "var_q": 0.5, "var_k": 4})
    assert np.allclose(t.result["exact"], [2.0, 128.0])
    assert np.allclose(t.result["exact_scaled"], [2.0, 2.0])
    assert np.allclose(t.result["monte_carlo"], [2.0, 128.0], rtol=0.1)
    assert np.allclose(t.steps[2].values["monte_carlo_scaled"], 2.0, rtol=0.1)
    assert t.disagreements() == [] and t.source == "user"
    assert "128" in t.steps[0].substitution and "σ_q²" in t.steps[0].formula
    with pytest.raises(ValueError, match=r"^input var_q: got 0, expected a number in \(0, 16\]$"):
        build("scaling", {"var_q": 0})


def test_scaling_defaults_are_unit_variances(traces):
    t = traces["scaling"]
    assert np.array_equal(t.result["exact"], [1, 4, 16, 64, 256])
    assert np.array_equal(t.result["exact_scaled"], [1, 1, 1, 1, 1])
    assert t.steps[0].formula.endswith("= d_k")


def test_masking_gives_exact_zeros(traces):
    t = traces["masking"]
    A, Z = t.result["A"], t.result["Z"]
    assert np.all(A[:, 3:] == 0.0)  # padding columns
    assert np.all(np.triu(A, k=1) == 0.0)  # causal: nothing above the diagonal
    assert np.allclose(A[:3].sum(axis=1), 1.0)
    assert np.all(A[3:] == 0.0) and np.all(Z[3:] == 0.0)  # padding rows: fully masked, zero out
    assert "instead of 0/0 = NaN" in t.steps[-1].note
    empty = build("masking", {"length": 0, "causal": False})
    assert np.all(empty.result["A"] == 0) and np.all(empty.result["Z"] == 0)


def test_masking_takes_scores_of_your_own():
    s = [0.3, -1.2, 0.8, 1.5]
    t = build("masking", {"tokens": "a b c d", "length": 4, "causal": True, "scores": [s] * 4,
                          "d_k": 9})
    A = t.result["A"]
    assert np.array_equal(A[0], [1, 0, 0, 0])
    e = [math.exp(x) for x in s]
    assert np.allclose(A[1], [e[0] / (e[0] + e[1]), e[1] / (e[0] + e[1]), 0, 0])
    assert np.allclose(A[3], [x / sum(e) for x in e])
    assert np.all(np.triu(A, k=1) == 0.0)
    assert t.disagreements() == [] and t.source == "user"
    assert np.array_equal(t.inputs["scores"], [s] * 4) and "d_k is not used" in t.steps[3].note
    # padding: rows and columns 3, 4 masked; rows 1, 2 see keys 1, 2 only
    pad = build("masking", {"tokens": "a b <pad> <pad>", "length": 2, "causal": False,
                            "scores": [[1.0, 0.0, 5.0, 5.0], [0.0, 0.0, 0.0, 0.0], [9, 9, 9, 9],
                                       [9, 9, 9, 9]]})
    assert np.allclose(pad.result["A"][0], [math.e / (math.e + 1), 1 / (math.e + 1), 0, 0])
    assert np.allclose(pad.result["A"][1], [0.5, 0.5, 0, 0])
    assert np.all(pad.result["A"][2:] == 0) and np.all(pad.result["Z"][2:] == 0)
    with pytest.raises(ValueError, match=r"^input scores: has n = 3 \(shape \(3, 3\)\), but "
                                         r"tokens has n = 5; expected shape \(n, n\) with the same n$"):
        build("masking", {"scores": np.eye(3)})


def test_masking_defaults_leave_scores_unset(traces):
    t = traces["masking"]
    assert t.source == "built" and "scores" not in t.inputs


def test_multi_head_by_naive_numpy(traces):
    t = traces["multi-head"]
    v0, vlast = t.steps[0].values, t.steps[-1].values
    Q, K, V = v0["Q"], v0["K"], v0["V"]
    heads = []
    for h in range(2):
        c = slice(2 * h, 2 * h + 2)
        S = Q[:, c] @ K[:, c].T / math.sqrt(2)
        A = np.array([softmax(row) for row in S])
        heads.append(A @ V[:, c])
    assert np.allclose(t.result["output"], np.concatenate(heads, axis=1) @ vlast["W_O"])
    with pytest.raises(ValueError, match=r"^input heads: got 3, expected a divisor of d_model = 4"):
        build("multi-head", {"heads": 3})


def test_positional_encoding_by_hand(traces):
    PE = traces["positional-encoding"].result["PE"]
    assert np.allclose(PE[0], [0, 1, 0, 1, 0, 1])
    w1 = 1 / 10000 ** (2 / 6)
    assert np.allclose(PE[1], [math.sin(1), math.cos(1), math.sin(w1), math.cos(w1),
                               math.sin(1e-4 ** (4 / 6)), math.cos(1e-4 ** (4 / 6))])
    G = PE @ PE.T
    assert math.isclose(G[0, 1], G[2, 3]) and math.isclose(G[0, 2], G[1, 3])


def test_pooling_matches_the_notes(traces):
    t = traces["pooling"]
    assert t.result["max"] == 100 and math.isclose(t.result["mean"], 23.4)
    assert math.isclose(t.result["attention"], 9.5)
    (e,) = t.errata
    assert e.kind == "claim" and "4.25" in e.computed and "52.6%" in e.computed
    other = build("pooling", {"weights": [0.2, 0.2, 0.2, 0.2, 0.2]})
    assert math.isclose(other.result["attention"], 23.4) and other.errata == []


# --------------------------------------------------------------------------- §10


def test_greedy_vs_beam_exact_tie(traces):
    t = traces["greedy-vs-beam"]
    assert t.result["greedy"] == ["the", "cat"]
    assert math.isclose(t.result["greedy_logp"], math.log(0.24))
    assert t.result["beam"] == ["the cat", "a dog"]
    assert np.allclose(t.result["beam_logps"], math.log(0.24))
    # the printed -1.43 / -1.42 add the stated two-decimal logs correctly: a step note; the
    # erratum is the conclusion drawn from them
    (verdict,) = t.errata
    assert "misses" in verdict.printed and verdict.kind == "claim" and verdict.id == "beam-verdict"
    assert "−1.42" in t.steps[-1].substitution and "not an error" in t.steps[-1].note


def test_greedy_vs_beam_with_other_numbers_finds_the_better_sentence():
    t = build("greedy-vs-beam", {"after_a": [0.1, 0.85]})
    assert t.result["beam"][0] == "a dog"
    assert math.isclose(t.result["beam_logps"][0], math.log(0.3 * 0.85))
    assert t.errata == []
    # one best sentence is not a tie: the value is named "best", not "tied_best"
    assert t.steps[4].values == {"best": ["a dog"]}
    assert traces_best_of_the_notes() == ["the cat", "a dog"]


def traces_best_of_the_notes():
    return build("greedy-vs-beam").steps[4].values["best"]


def test_beam_search_pool_and_length_penalty():
    t = build("beam-search")
    assert t.result["n_best"] == ["the cat </s>", "a dog </s>"]
    assert np.allclose(t.result["scores"], math.log(0.24))
    hf = build("beam-search", {"length_penalty": "hf", "beam_width": 3})
    assert np.allclose(hf.result["scores"], [math.log(0.24) / 3] * 2 + [math.log(0.2) / 3])


def test_beam_search_scores_hypotheses_of_your_own():
    hyps = [[0.5, 0.9, 0, 0], [0.6, 0.7, 0.8, 0.9]]  # A: 2 tokens, B: 4 tokens
    t = build("beam-search", {"hypotheses": hyps, "length_penalty": "hf", "alpha": 0.7})
    la, lb = math.log(0.5 * 0.9), math.log(0.6 * 0.7 * 0.8 * 0.9)
    sa, sb = la / 2 ** 0.7, lb / 4 ** 0.7
    assert np.allclose(t.result["logps"], [la, lb]) and t.result["raw_best"] == "A"
    assert np.allclose(t.result["normalised"], [sa, sb]) and sb > sa
    assert t.result["n_best"] == ["B", "A"] and np.allclose(t.result["scores"], [sb, sa])
    assert t.disagreements() == [] and t.source == "user" and t.errata == []
    assert "changes the winner" in t.steps[-1].note
    gnmt = build("beam-search", {"hypotheses": hyps, "length_penalty": "gnmt", "alpha": 1.0})
    assert np.allclose(gnmt.result["normalised"], [la / (7 / 6), lb / (9 / 6)])
    raw = build("beam-search", {"hypotheses": [[0.5, 0.9, 0], [0.9, 0.9, 0.9]]})
    assert np.allclose(raw.result["scores"], [math.log(0.9 ** 3), math.log(0.45)])
    assert raw.result["n_best"] == ["B", "A"] == [raw.result["raw_best"], "A"]


@pytest.mark.parametrize("hyps, message", [
    ([[0.5, 0, 0.9], [0.6, 0.7, 0.8]], r"^input hypotheses: row 1 is \[0.5, 0, 0.9\], a 0 at "
                                       r"position 2 before later tokens; expected token "
                                       r"probabilities in \(0, 1\] followed only by 0s \(padding\)$"),
    ([[0.5, 0.9], [0, 0]], r"^input hypotheses: row 2 is all 0, expected at least one token "
                           r"probability in \(0, 1\]$"),
    ([[0.5, 1.2]], r"^input hypotheses: has 1.2, expected values <= 1$"),
])
def test_beam_search_rejects_bad_hypotheses(hyps, message):
    with pytest.raises(ValueError, match=message):
        build("beam-search", {"hypotheses": hyps})


def test_beam_search_defaults_leave_hypotheses_unset(traces):
    t = traces["beam-search"]
    assert "hypotheses" not in t.inputs and t.source == "notes+built" and t.errata


def test_top_k_keeps_ties_and_renormalises(traces):
    t = traces["top-k"]
    assert np.allclose(t.result["probs_top_k"], [4 / 7, 3 / 7, 0, 0])
    tied = build("top-k", {"probs": [0.4, 0.3, 0.3, 0.0], "k": 2})
    assert np.allclose(tied.result["probs_top_k"], [0.4, 0.3, 0.3, 0])
    assert traces["top-k"].errata[0].kind == "inconsistency"


@pytest.mark.parametrize(("k", "rank"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th")])
def test_top_k_note_names_the_rank_in_english(k, rank):
    note = build("top-k", {"k": k}).steps[1].note
    assert f"below the {rank} word" in note and "-th" not in note


def test_nucleus_keeps_the_word_that_reaches_p(traces):
    assert np.allclose(traces["nucleus"].result["probs_top_p"], [4 / 9, 3 / 9, 2 / 9, 0])
    assert np.allclose(build("nucleus", {"p": 0.5}).result["probs_top_p"], [4 / 7, 3 / 7, 0, 0])
    assert "exceeds" in traces["nucleus"].steps[0].note


def test_temperature_by_hand(traces):
    P = traces["temperature"].result["probs"]
    p = np.array([0.4, 0.3, 0.2, 0.1])
    assert np.allclose(P[1], p)
    assert np.allclose(P[0], p ** 2 / (p ** 2).sum())
    assert np.allclose(P[2], np.sqrt(p) / np.sqrt(p).sum())


# --------------------------------------------------------------------------- §11–§12


def test_heatmap_reading_errata_and_alignment(traces):
    t = traces["heatmap-reading"]
    assert t.result["alignment"] == ["my", "hurt", "feet", "feet", "feet"]
    assert np.asarray(t.heatmaps[0].weights).shape == (5, 3)
    text = " ".join(e.printed + " " + e.computed for e in t.errata)
    assert "3×3" in text and "4 × 3" in text
    assert "mal → feet 0.8, hurt 0.1" in text
    assert "[0.1, 0.2, 0.7]" in text and "[0.2, 0.1, 0.7]" in text
    assert "aux pieds" in text


def test_cross_entropy_matches_the_notes(traces):
    t = traces["cross-entropy"]
    assert np.allclose(t.result["losses"], [-math.log(0.6), -math.log(0.8)])
    assert round(t.result["L"], 3) == 0.734
    assert np.allclose(t.result["grad"], [[-0.4, 0.3, 0.1], [0.1, 0.1, -0.2]])
    assert round(t.steps[-1].values["L_trained"], 2) == 0.02


def test_training_step_lowers_the_loss(traces):
    t = traces["training-step"]
    v = t.steps[0].values
    C = v["C"]
    dZ = t.steps[2].values["dZ"]
    assert np.allclose(t.result["dW_O"], dZ.T @ C)
    assert np.allclose(dZ.sum(axis=1), 0)
    assert t.result["L_after"] < t.result["L"]
    chk = t.steps[3].values
    assert math.isclose(chk["analytic"], chk["finite_difference"], rel_tol=1e-6)


# --------------------------------------------------------------------------- model


def test_coerce_inputs_names_the_changed_input_on_a_size_clash():
    specs = input_specs("scores")
    with pytest.raises(ValueError, match=r"^input Q: has d_k = 3 \(shape \(3,\)\), but K has d_k = 2"):
        coerce_inputs(specs, {"Q": [1, 2, 3]})


def test_word_and_optional_inputs():
    spec = InputSpec("w", "word", "a", "one word")
    assert spec.coerce(" cat ") == "cat"
    with pytest.raises(ValueError, match="expected one word"):
        spec.coerce("two words")
    opt = InputSpec("V", "matrix", None, "optional", optional=True)
    assert opt.coerce(None) is None


# --------------------------------------------------------------------------- out-of-range inputs


@pytest.mark.parametrize(("name", "override", "message"), [
    ("qkv", {"W_Q": [[1e300, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]},
     r"^input W_Q: has 1\.000e\+300, expected values between -1e6 and 1e6"),
    ("self-attention", {"X": [[-1e300, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]},
     r"^input X: has -1\.000e\+300, expected values between -1e6 and 1e6"),
    ("encoder", {"b": [0, 2e6, 0]}, r"^input b: has 2000000, expected values between"),
    ("positional-encoding", {"base": 1e300}, r"^input base: got 1\.000e\+300, expected numbers between"),
])
def test_huge_numbers_are_refused_in_one_line(name, override, message):
    with pytest.raises(ValueError, match=message):
        build(name, override)


def test_huge_whole_numbers_print_short_and_both_bounds_read_as_a_range():
    with pytest.raises(ValueError) as info:
        build("qkv", {"position": 1e300})
    assert str(info.value) == "input position: got 1.000e+300, expected a whole number >= 1 and below 1e15"
    with pytest.raises(ValueError) as info:
        build("scaling", {"samples": 5})
    assert str(info.value) == "input samples: got 5, expected a whole number from 10 to 2000"


@pytest.mark.parametrize(("name", "override", "key"), [
    ("qkv", {"W_Q": [[1e6, 0, 0], [0, 1e6, 0], [0, 0, 1], [0, 0, 0]]}, "weights"),
    ("scores", {"Q": [1e6, -1e6]}, "weights"),
    ("scores", {"Q": [-1e6, -1e6]}, "weights"),
])
def test_large_scores_still_give_softmax_weights(name, override, key):
    """e^score overflows for scores in the thousands; the traces shift by the max instead."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or 0/0 warnings either
        t = build(name, override)
    w = np.asarray(t.result[key], float)
    assert np.all(np.isfinite(w)) and math.isclose(w.sum(), 1.0)
    spec = {s.name: s for s in input_specs(name)}
    if name == "qkv":
        X, W_Q, W_K = (np.asarray(spec[k].coerce(override.get(k, spec[k].default)), float)
                       for k in ("X", "W_Q", "W_K"))
        s = (X @ W_K) @ (X @ W_Q)[1] / math.sqrt(3)
    else:
        s = np.asarray(spec["K"].default, float) @ np.asarray(override["Q"], float) / math.sqrt(2)
    assert np.allclose(w, softmax(s))
    assert t.disagreements() == []
    assert any("m = " in step.substitution for step in t.steps)  # the shift is shown


def test_notes_scores_are_exponentiated_as_printed(traces):
    """The shift only appears when it is needed: the notes' e^0.5774 = 1.7813 stays."""
    assert "e^score = 1.7813, 1, 1" in traces["qkv"].steps[5].substitution
    assert "m = " not in traces["scores"].steps[3].substitution


@pytest.mark.parametrize(("override", "message"), [
    ({"weights": [[0, 0, 0], [0.1, 0.8, 0.1], [0.05, 0.9, 0.05], [0.05, 0.85, 0.1]]},
     r"^input weights: the row for 'ai' sums to 0, expected attention weights summing to 1 per row$"),
    ({"weights": [[0.5, 0.5, 0.5], [0.1, 0.8, 0.1], [0.05, 0.9, 0.05], [0.05, 0.85, 0.1]]},
     r"^input weights: the row for 'ai' sums to 1\.5, expected"),
    ({"missing_rows": [[0, 0, 0]]}, r"^input missing_rows: the row for \"j'\" sums to 0, expected"),
])
def test_heatmap_reading_rows_must_be_distributions(override, message):
    with pytest.raises(ValueError, match=message):
        build("heatmap-reading", override)


def test_numbers_given_as_words_keep_the_way_they_were_typed():
    """`--set tokens='1 2 3'` arrives as floats; the trace shows 1, 2, 3, not 1.0, 2.0, 3.0."""
    t = build("qkv", {"tokens": [1.0, 2.0, 3.5]})
    assert t.inputs["tokens"] == ["1", "2", "3.5"]
    assert "K₁ (1) = " in t.steps[2].substitution


def test_one_number_is_a_vector_of_one():
    """`--set temperatures=0.25` compares a single temperature instead of failing on shape ()."""
    t = build("temperature", {"temperatures": 0.25})
    z = np.log([0.4, 0.3, 0.2, 0.1])
    assert np.allclose(t.result["probs"], [softmax(z / 0.25)])


def test_bottleneck_ratio_checks_out_with_the_digits_shown():
    """"0.001 / 0.307 = 0.004" was the rounding of 0.00126 / 0.307: by hand it gives 0.003."""
    t = build("bottleneck")
    text = t.steps[4].substitution
    a, b, c = (float(x) for x in re.match(r"(\S+) / (\S+) = (\S+)$", text).groups())
    assert math.isclose(a / b, c, rel_tol=0.02)
    share = t.steps[3].values["share"]
    assert math.isclose(c, share[0] / share[-1], rel_tol=0.01)


def _numbers(value) -> list[float]:
    """Every number inside a value (scalars, nested lists, arrays, dicts); words are skipped."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    if isinstance(value, np.ndarray):
        return [float(x) for x in value.ravel()] if value.dtype.kind in "fiub" else []
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return [float(value)]
    return []


@pytest.mark.parametrize("name", NAMES)
def test_numbers_in_the_trace_list_are_the_traces_own(traces, name):
    """The list (`attn-tutor trace`) is plain metadata, so its numbers are typed: each one must
    be an input or a computed value of the trace, at the precision shown."""
    t = traces[name]
    pool = _numbers(t.inputs) + _numbers(t.result) + [x for s in t.steps for x in _numbers(s.values)]
    for text in re.findall(r"(?<![\w.^_])-?\d+(?:\.\d+)?(?![\w.]\d|\w)", get_info(name).description):
        digits = len(text.split(".")[1]) if "." in text else 0
        assert any(round(x, digits) == float(text) for x in pool), (name, text)


def test_training_step_says_so_when_a_big_step_raises_the_loss():
    """With lr = 100 the loss rises (4.17 → 1151 for seed 0) and the note said "a step downhill"."""
    t = build("training-step", {"lr": 100, "seed": 0, "d_h": 16})
    assert t.result["L_after"] > t.result["L"]
    assert "downhill;" not in t.steps[-1].note and "overshot" in t.steps[-1].note
    assert "downhill;" in build("training-step").steps[-1].note


def test_notes_that_quote_numbers_follow_the_inputs():
    """cross-attention's last step was titled "C₁ ≈ 0.85·H" and said "drops the 15%" whatever the
    weights; pooling called the largest reading's weight small even when it was not."""
    t = build("cross-attention", {"queries": [[0, 0], [5.9673, 1.9605]]})
    w = t.result["weights"][0][4]
    assert math.isclose(w, 0.1)
    assert t.steps[-1].title == 'How good is "C₁ ≈ 0.1·H"?' and "drops the 90%" in t.steps[-1].note
    assert "0.85·H" in build("cross-attention").steps[-1].title
    even = build("pooling", {"values": [1, 2, 3, 4, 5], "weights": [0.2] * 5})
    assert even.steps[3].note == "The largest reading, 5, supplies 33.3% of the output."


def test_heatmap_reading_credits_section_4_only_for_its_own_row():
    """With other missing_rows the note still said "§4 supplies the j' row ([0.6, 0.3, 0.1])"."""
    assert "([0.6, 0.3, 0.1])" in build("heatmap-reading").steps[2].note
    note = build("heatmap-reading", {"missing_rows": [[0.2, 0.2, 0.6]]}).steps[2].note
    assert "§4" not in note and "0.6, 0.3" not in note


def test_error_cascade_by_hand(traces):
    r = traces["error-cascade"].result
    # default table: <s> → a (the notes' 60%), a → dog (0.5); P(sat | cat) is the notes' 90%
    assert r["fed_forced"] == ["<s>", "the", "cat"] and r["fed_free"] == ["<s>", "a", "dog"]
    np.testing.assert_allclose(r["losses_forced"], [-math.log(0.2), -math.log(0.6), -math.log(0.9)])
    np.testing.assert_allclose(r["losses_free"], [-math.log(0.2), -math.log(0.2), -math.log(0.3)])
    assert r["L_free"] > r["L_forced"]


def test_error_cascade_refuses_a_word_without_a_row():
    with pytest.raises(ValueError, match="'dog', which has no row"):
        build("error-cascade", {"fed": ["<s>", "the", "a", "cat"], "table": [
            [0.2, 0.6, 0.05, 0.05, 0.05, 0.05], [0.05, 0.05, 0.6, 0.2, 0.05, 0.05],
            [0.05, 0.05, 0.2, 0.5, 0.1, 0.1], [0.05, 0.05, 0.05, 0.05, 0.7, 0.1]]})


def test_trace_notes_name_inputs_not_command_line_flags():
    """The TUI shows the same notes: "try --set length_penalty=hf" told a TUI user to type a flag."""
    from engine.traces import build, list_traces

    for info in list_traces():
        trace = build(info.name)
        for step in trace.steps:
            assert "--set" not in step.note and "attn-tutor" not in step.note, (info.name, step.title)
