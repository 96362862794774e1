"""Lessons that quote a trace's numbers quote what the trace computes.

Each test builds the trace, formats the values the lesson cites the way the lesson writes them,
and asserts every phrase is in the lesson part (whitespace folded, so line breaks do not
matter). A lesson edited to different numbers, or a trace whose defaults change, fails here.
Each test also checks that what the paragraph teaches holds in the trace.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from engine.trace import Trace, fmt_num
from engine.traces import build
from tutor.content import get_lesson


def lesson_text(lesson_id: str, heading: str) -> str:
    """One part of a lesson with its whitespace folded to single spaces."""
    return " ".join(get_lesson(lesson_id).part(heading).split())


def assert_quotes(lesson_id: str, heading: str, phrases: Iterable[str]) -> str:
    """Every phrase is in the lesson part; returns the folded text for further checks."""
    text = lesson_text(lesson_id, heading)
    missing = [phrase for phrase in phrases if phrase not in text]
    assert missing == [], f"lesson {lesson_id} '## {heading}' does not say: {missing}"
    return text


def values(trace: Trace) -> dict[str, Any]:
    """Every named value of the trace: the steps' values, overlaid with the result."""
    named: dict[str, Any] = {}
    for step in trace.steps:
        named.update(step.values)
    return {**named, **trace.result}


def tup(xs: Iterable[float]) -> str:
    """(0.4711, 0.2645, 0.2645): a vector as the lessons write it in running text."""
    return "(" + ", ".join(fmt_num(float(x)) for x in xs) + ")"


def big(x: float) -> str:
    """1,048,576: a count with its digits grouped."""
    assert float(x).is_integer()
    return f"{int(x):,}"


def test_teacher_forcing_lesson_quotes_the_traces_numbers():
    """Lesson 3 once claimed "sat" came out right under teacher forcing while its trace's
    untrained decoder predicted "ran"; now it quotes what the trace computes."""
    t = build("teacher-forcing")
    r, inputs = t.result, t.inputs
    fed = " ".join(w.replace("<start>", "⟨start⟩") for w in r["fed_free_before"])
    p_after = ", ".join(f"{x:.3f}" for x in r["p_target_forced_after"][:-1])
    assert_quotes("teacher-forcing", "Worked example", [
        f"it predicts {', '.join(r['predicted_forced_before'])}",
        f"gives \"sat\" only P = {r['p_last_forced_before']:.4f}",
        f"({fed}) it predicts {', '.join(r['predicted_free_before'])}",
        f"L = {r['loss_forced_before']:.2f} teacher-forced and {r['loss_free_before']:.2f} free running",
        f"After {inputs['train_steps']} teacher-forced updates",
        f"η = {inputs['lr']:g}",
        f"predicts {', '.join(r['predicted_forced_after'])} with probabilities {p_after} and "
        f"{r['p_target_forced_after'][-1]:.3f}",
        f"down to {r['loss_forced_after']:.3f}",
        f"writes \"{' '.join(r['generated_forced'])}\"",
        f"After {inputs['train_steps']} free-running updates",
        f"generating \"{' '.join(r['generated_free'])}\", with P(sat) = {r['p_target_free_after'][-1]:.3f}",
        f"L = {r['loss_generated_free']:.2f}",
    ])
    # what the lesson teaches holds in the trace: the trained decoder gets "sat" from "cat"
    assert r["predicted_forced_after"][-1] == "sat" and r["p_target_forced_after"][-1] > 0.8
    assert r["generated_free"] != r["generated_forced"]
    training = t.steps[4].substitution  # free running: the first word flips during training
    assert "<start> sat" in training and "<start> The" in training


def test_training_lesson_quotes_the_attention_backward_and_training_step_traces():
    t = build("attention-backward")
    v, inputs = values(t), t.inputs
    i = inputs["position"] - 1
    assert i == 1 and inputs["tokens"][i] == "love"
    d_k = inputs["W_Q"].shape[1]
    step = build("training-step")
    s = values(step)
    assert_quotes("training", "Worked example", [
        "every row of dO is [1, 0]",
        f"α_2 = {tup(v['alpha'][i])}",
        f"dα_2 = dO_2 Vᵀ = {tup(v['d_alpha_2'])}",
        f"The α-weighted mean of dα_2 is {fmt_num(float(v['alpha'][i] @ v['d_alpha_2']))}",
        f"dS_2 = {tup(v['d_scores_2'])}",
        f"Dividing by √{d_k} = {fmt_num(math.sqrt(d_k))}",
        f"dQ_2 = {tup(v['dQ_2'])}",
        f"finite difference ({fmt_num(v['analytic'])} both ways)",
        f"weights go from {tup(s['alpha'][0])} to {tup(s['alpha_after'][0])}",
        f"falls from {fmt_num(s['L'])} to {fmt_num(s['L_after'])}",
    ])
    # the default loss is L = Σ_i O_i1; "I" is the only word whose value has a first coordinate
    assert np.array_equal(inputs["dO"], np.tile([1, 0], (3, 1)))
    assert [V[0] != 0 for V in v["V"]] == [True, False, False]
    # the one-hot embeddings make row 2 of dW_Q the query's gradient; the check agrees
    assert np.allclose(v["dW_Q"][i], v["dQ_2"]) and np.allclose(inputs["X"][:, :3], np.eye(3))
    assert fmt_num(v["finite_difference"]) == fmt_num(v["analytic"])
    assert abs(sum(v["d_scores_2"])) < 1e-12
    # one step changes all four matrices and lowers the loss
    for name in ("W_O", "W_Q", "W_K", "W_V"):
        assert not np.allclose(s[name], s[name + "_new"]), name
    assert s["L_after"] < s["L"]


def _matrix_block(text: str, name: str) -> np.ndarray:
    """The numbers of the fenced block that starts with ``name =`` in a lesson part."""
    block = re.search(rf"```\s*{re.escape(name)} = (.*?)```", text, re.S)
    assert block, f"no code block starting with '{name} ='"
    return np.array([float(x) for x in re.findall(r"-?\d+\.?\d*", block[1])])


def test_scoring_lesson_quotes_the_softmax_jacobian_trace():
    t = build("softmax-jacobian")
    v, inputs = values(t), t.inputs
    ratio = v["norm_scaled"] / v["norm_unscaled"]
    d = inputs["d_k_big"]
    assert_quotes("scoring", "Worked example", [
        f"scores the keys of \"I\", \"love\" and \"cats\" as {tup(v['scores'])}",
        f"α = {tup(v['alpha'])}",
        f"g = ∂L/∂α = {tup(inputs['grad'])}",
        f"as α ⊙ (g - α · g) = {tup(v['d_scores'])}",
        f"with d_k = {d} random coordinates (the trace uses seed {inputs['seed']})",
        f"α = {tup(v['alpha_unscaled'])} and the Jacobian's Frobenius norm is "
        f"{fmt_num(v['norm_unscaled'])}",
        f"divided by √{d} = {fmt_num(math.sqrt(d))} the same dot products give "
        f"α = {tup(v['alpha_scaled'])} and a norm of {fmt_num(v['norm_scaled'])}, "
        f"{ratio:.2f} times as large",
    ])
    text = get_lesson("scoring").part("Worked example")
    np.testing.assert_allclose(_matrix_block(text, "J"), np.ravel(v["J"]), atol=5e-5)
    # what the paragraph says of J holds: diagonal > 0, off-diagonal < 0, symmetric, rows sum to 0
    J = np.asarray(v["J"])
    assert np.all(np.diag(J) > 0) and np.all(J[~np.eye(3, dtype=bool)] < 0)
    assert np.allclose(J, J.T) and np.allclose(v["row_sums"], 0, atol=1e-12)
    assert max(v["alpha_unscaled"]) > 0.99 > max(v["alpha_scaled"])


def test_scoring_lesson_quotes_the_additive_backward_trace():
    t = build("additive-backward")
    v, inputs = values(t), t.inputs
    # the paragraph names its inputs: W_q = W_k = I_3, v = [1, 1, 1], ∂L/∂o = [1, 0]
    assert np.array_equal(inputs["W_q"], np.eye(3)) and np.array_equal(inputs["W_k"], np.eye(3))
    assert list(inputs["v"]) == [1, 1, 1] and list(inputs["dO"]) == [1, 0]
    pre = inputs["W_q"] @ inputs["query"] + inputs["W_k"] @ inputs["K"][0]  # "I", the first key
    assert_quotes("scoring", "Worked example", [
        "W_q = W_k = I_3, v = [1, 1, 1] and ∂L/∂o = [1, 0]",
        f"The additive scores are {tup(v['scores'])}, α = {tup(v['alpha'])}",
        f"the gradient reaching the scores is {tup(v['d_scores'])}",
        f"∂L/∂v = Σ_j (∂L/∂e_j) t_j = {tup(v['dv'])}",
        "for \"I\", W_q q + W_k k_1 = [" + ", ".join(fmt_num(x) for x in pre) + "]",
        f"the middle unit's slope is only {fmt_num(v['tanh_slope'][0][1])}",
        f"through W_qᵀ as {tup(v['dq'])}",
        f"same query and keys gives {tup(v['dq_dot'])} instead",
    ])
    # the scores' gradient is the dot-product rule applied to the additive weights
    a, da = np.asarray(v["alpha"]), np.asarray(v["d_alpha"])
    np.testing.assert_allclose(v["d_scores"], a * (da - a @ da), atol=1e-12)


def test_self_attention_lesson_quotes_the_multi_head_cost_trace():
    t = build("multi-head-cost")
    v, inputs = values(t), t.inputs
    n, d, h = inputs["n"], inputs["d_model"], inputs["heads"]
    assert (n, d, h, inputs["kernel"]) == (100, 512, 8, 3)
    ops, path = v["operations"], v["path_length"]
    assert_quotes("self-attention", "Worked example", [
        f"d_model = {d} and h = {h} heads of d_k = d_v = {v['d_k']}",
        f"is {d} × {d}, {big(v['params'] // 4)} weights",
        f"the layer has {big(v['params'])} of them",
        f"Over n = {n} positions",
        f"one forward pass costs {big(v['flops'])} FLOPs",
        f"The projections in and out take {big(v['linear_flops'])} of them",
        f"over all heads, only {big(v['quadratic_flops'])}",
        f"at n = 2·d_model = {fmt_num(v['crossover_n'])} positions",
        f"(h·n² = {big(v['exponentials'])} exponentials here)",
        f"at n = {n} and d = {d}, self-attention's n²·d is {big(ops[0])}",
        f"a recurrent layer's n·d² is {big(ops[1])}",
        f"a convolution with kernel {inputs['kernel']} does k·n·d² = {big(ops[2])}",
        f"must also run {big(v['sequential'][1])} steps one after another",
        f"crosses {big(path[1])} of them",
        f"convolutions need {big(path[2])} layers",
    ])
    assert v["linear_flops"] + v["quadratic_flops"] == v["flops"] and v["crossover_n"] == 2 * d
    assert v["sequential"][0] == path[0] == 1
    # "Changing h moves neither count": other head counts, same weights and FLOPs
    for heads in (1, 4, 16):
        other = build("multi-head-cost", {"heads": heads}).result
        assert (other["params"], other["flops"]) == (v["params"], v["flops"]), heads
        assert other["exponentials"] == heads * n * n
