"""``teacher-forcing`` (§3): one seeded decoder before and after training, fed the
reference (teacher forcing) or its own guesses (free running).

The decoder's forward pass and its training (backpropagation through time) are the trace
module's own (``engine.traces.teacher_forcing``); the slips change what is fed when the
student evaluates a model and how the losses are taken.
"""

from __future__ import annotations

import functools

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces._common import Draw, word_index
from engine.traces.teacher_forcing import _forward, _greedy, _train

TRACE = "teacher-forcing"
MISTAKES = ("teacher-forcing-fed-prediction", "free-running-fed-reference", "ce-log10", "ce-log2",
            "ce-mean-not-sum", "loss-against-prediction", "rounded-intermediates")
PAIRS = (("ce-log10", "ce-mean-not-sum"), ("ce-log2", "ce-mean-not-sum"),
         ("teacher-forcing-fed-prediction", "ce-log10"))


@functools.lru_cache(maxsize=16)
def _models(target: tuple[str, ...], vocab: tuple[str, ...], d_h: int, seed: int,
            train_steps: int, lr: float):
    """The seeded start and the two trained decoders (no slip changes training itself)."""
    ids = [word_index(w, list(vocab), "target") for w in target]
    V = len(vocab)
    draw = Draw(seed)
    C = draw(d_h)
    start = {"W_HH": draw(d_h, d_h), "W_HY": draw(d_h, V + 1, scale=1.0), "W_HC": draw(d_h, d_h),
             "b": draw(d_h, scale=0.1), "W_O": draw(V, d_h, scale=1.0)}
    tf_params, tf_losses, _ = _train(start, C, ids, train_steps, lr, forced=True)
    fr_params, fr_losses, _ = _train(start, C, ids, train_steps, lr, forced=False)
    return C, start, tf_params, tf_losses, fr_params, fr_losses


def compute(inp: dict, s: Slips) -> dict:
    target, vocab = inp["target"], inp["vocab"]
    ids = [word_index(w, vocab, "target") for w in target]
    T = len(target)
    C, start, tf_params, tf_losses, fr_params, fr_losses = _models(
        tuple(target), tuple(vocab), inp["d_h"], inp["seed"], inp["train_steps"], inp["lr"])
    forced_in = [0] + [i + 1 for i in ids[:-1]]
    to_forced, to_free = s.on("teacher-forcing-fed-prediction"), s.on("free-running-fed-reference")

    def evaluate(params, forced: bool):
        """(P (T, V), per-step losses, loss) of ``params`` fed the reference or its guesses."""
        feed_reference = not to_forced if forced else to_free  # the slips swap what is fed
        if feed_reference:
            probs = np.array(_forward(params, C, forced_in)[1])
        else:
            probs = np.array(_greedy(params, C, T)[1])
        losses = _ops.nll_rows(probs, ids, s)
        return probs, losses, _ops.total(losses, s)

    def curve(losses: list[float]) -> np.ndarray:
        out = np.array(losses) / {True: np.log(10), False: 1.0}[s.on("ce-log10")]
        if s.on("ce-log2"):
            out = out / np.log(2)
        return out / (T if s.on("ce-mean-not-sum") else 1)

    P_fb, l_fb, L_fb = evaluate(start, True)
    P_rb, l_rb, L_rb = evaluate(start, False)
    P_fa, l_fa, L_fa = evaluate(tf_params, True)
    P_ga, l_ga, L_ga = evaluate(tf_params, False)  # the teacher-forced model generating
    P_ra, l_ra, L_ra = evaluate(fr_params, False)
    return {"C": C, "W_O": start["W_O"],
            "P_forced_before": P_fb, "loss_forced_before": L_fb, "p_last_forced_before": P_fb[-1][ids[-1]],
            "P_free_before": P_rb, "loss_free_before": L_rb,
            "losses_forced": curve(tf_losses), "losses_free": curve(fr_losses),
            "P_forced_after": P_fa, "loss_forced_after": L_fa,
            "p_target_forced_after": P_fa[np.arange(T), ids],
            "P_free_after": P_ra, "loss_free_after": L_ra,
            "p_target_free_after": P_ra[np.arange(T), ids],
            "loss_generated_forced": L_ga, "loss_generated_free": L_ra}
