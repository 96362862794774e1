"""Trace ``teacher-forcing`` (§3): one tiny decoder, before and after a few training updates.

The notes tell the "The cat sat" story in words only, so the decoder here is a seeded
example: a tanh RNN decoder (the §1 decoder equation) with a fixed context C, whose first guess
before training is "A", as in the notes. Two copies start from the same weights and take the
same number of plain gradient-descent steps on L = Σₜ −log P(Yₜ):

* teacher forcing feeds the reference tokens <start> The cat at every update;
* free running feeds the model's own current argmax guesses (no gradient flows through the
  choice, as in training with ``teacher_forcing_ratio = 0``).

The gradient is backpropagation through time written out below (``loss_and_grad``); the test
suite checks it against finite differences, and the fused results re-run every forward pass
with the engine's ``decoder_step`` and ``cross_entropy``. Everything is deterministic: the
seed fixes the starting weights and there is no sampling.
"""

from __future__ import annotations

import numpy as np

from engine.loss import cross_entropy
from engine.rnn import decoder_step
from engine.trace import Erratum, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import Draw, lines, n, one_hot, v, word_index

INPUTS = [
    InputSpec("target", "labels", ["The", "cat", "sat"], "the target sentence", shape=("T",)),
    InputSpec("vocab", "labels", ["The", "A", "cat", "dog", "sat", "ran", "feline"],
              "the words the decoder can output (every word the notes' story uses)"),
    InputSpec("d_h", "int", 4, "decoder state size", low=1, high=32),
    InputSpec("seed", "int", 74, "seed for the decoder's starting weights and context", low=0),
    InputSpec("train_steps", "int", 10, "gradient-descent updates for each regime", low=0,
              high=200),
    InputSpec("lr", "scalar", 0.5, "learning rate η of the updates", low=0.0, low_open=True,
              high=10.0),
]

NAMES = ("W_HH", "W_HY", "W_HC", "b", "W_O")
"""The trained parameters; the context C stays fixed (it stands for the encoder's output)."""


def _forward(params: dict[str, np.ndarray], C: np.ndarray, inputs: list[int]):
    """States, probabilities for the fed input ids (0 = <start>)."""
    W_HH, W_HY, W_HC, b, W_O = (params[k] for k in NAMES)
    h = C.copy()  # (d_h,) H₀ = C
    states, probs = [h], []
    for tok in inputs:
        y = one_hot(tok, W_HY.shape[1])  # (d_y,)
        h = np.tanh(W_HH @ h + W_HY @ y + W_HC @ C + b)  # (d_h,)
        z = W_O @ h  # (V,)
        e = np.exp(z - z.max())
        states.append(h)
        probs.append(e / e.sum())
    return states, probs


def loss_and_grad(params: dict[str, np.ndarray], C: np.ndarray, inputs: list[int],
                  targets: list[int]) -> tuple[float, dict[str, np.ndarray]]:
    """L = Σₜ −log Pₜ(targetₜ) for the fed ``inputs``, and ∂L/∂θ by backpropagation through time.

    ``inputs`` are readable-vocabulary ids (0 = <start>, k = vocab[k − 1]); ``targets`` are
    vocabulary ids. The inputs are treated as given: no gradient flows through how they were
    chosen.
    """
    states, probs = _forward(params, C, inputs)
    W_HH, W_HY, W_O = params["W_HH"], params["W_HY"], params["W_O"]
    loss = float(-sum(np.log(probs[t][targets[t]]) for t in range(len(targets))))
    grad = {k: np.zeros_like(params[k]) for k in NAMES}
    dh_next = np.zeros_like(C)  # ∂L/∂Hₜ arriving from step t + 1
    for t in reversed(range(len(targets))):
        dz = probs[t].copy()  # (V,) ∂Lₜ/∂zₜ = Pₜ − onehot
        dz[targets[t]] -= 1.0
        grad["W_O"] += np.outer(dz, states[t + 1])  # (V, d_h)
        dh = W_O.T @ dz + dh_next  # (d_h,)
        da = dh * (1.0 - states[t + 1] ** 2)  # (d_h,) through tanh
        grad["W_HH"] += np.outer(da, states[t])
        grad["W_HY"] += np.outer(da, one_hot(inputs[t], W_HY.shape[1]))
        grad["W_HC"] += np.outer(da, C)
        grad["b"] += da
        dh_next = W_HH.T @ da
    return loss, grad


def _greedy(params: dict[str, np.ndarray], C: np.ndarray, T: int) -> tuple[list[int], list[np.ndarray]]:
    """Run free from <start>: the input ids fed (0 = <start>) and each step's distribution."""
    fed, probs = [0], []
    for t in range(T):
        _, ps = _forward(params, C, fed)
        probs.append(ps[-1])
        if t < T - 1:
            fed.append(int(np.argmax(ps[-1])) + 1)
    return fed, probs


def _train(params, C, targets, steps, lr, forced):
    """Plain gradient descent; returns the final parameters, the loss before each update (and
    after the last) and the inputs fed at each update."""
    params = {k: p.copy() for k, p in params.items()}
    losses, fed_log = [], []
    for k in range(steps + 1):
        fed = [0] + [i + 1 for i in targets[:-1]] if forced else _greedy(params, C, len(targets))[0]
        loss, grad = loss_and_grad(params, C, fed, targets)
        losses.append(loss)
        fed_log.append(fed)
        if k < steps:
            for name in NAMES:
                params[name] = params[name] - lr * grad[name]
    return params, losses, fed_log


def _engine_run(params, C, fed, targets, V):
    """The same forward pass with the engine's decoder_step and cross_entropy (the fused check)."""
    h = C.copy()
    logits, guesses = [], []
    for tok in fed:
        h, z, p = decoder_step(h, one_hot(tok, V + 1), C, params["W_HH"], params["W_HY"],
                               params["W_HC"], params["b"], params["W_O"])
        logits.append(z)
        guesses.append(int(np.argmax(p)))
    return guesses, float(cross_entropy(np.array(logits), np.array(targets), reduction="sum"))


def build(target: list[str], vocab: list[str], d_h: int, seed: int, train_steps: int,
          lr: float) -> Trace:
    inputs = {"target": target, "vocab": vocab, "d_h": d_h, "seed": seed,
              "train_steps": train_steps, "lr": lr}
    readable = ["<start>"] + list(vocab)
    ids = [word_index(w, vocab, "target") for w in target]
    T, V = len(target), len(vocab)
    draw = Draw(seed)
    C = draw(d_h)  # (d_h,)
    start = {"W_HH": draw(d_h, d_h), "W_HY": draw(d_h, V + 1, scale=1.0), "W_HC": draw(d_h, d_h),
             "b": draw(d_h, scale=0.1), "W_O": draw(V, d_h, scale=1.0)}
    forced_in = [0] + [i + 1 for i in ids[:-1]]
    words = lambda fed: " ".join(readable[i] for i in fed)  # noqa: E731

    def seq_loss(probs) -> float:  # L = Σₜ −log Pₜ(Yₜ)
        return float(-sum(np.log(probs[t][ids[t]]) for t in range(T)))

    def run_step(title, formula, probs, fed, key, note, extra=()):
        """One step listing, for each t, what was fed, what came out and its loss."""
        out = []
        for t in range(T):
            guess = vocab[int(np.argmax(probs[t]))]
            mark = "right" if guess == target[t] else "wrong"
            out.append(f"t = {t + 1}: input {readable[fed[t]]:<8} → predicts {guess} ({mark}), "
                       f"P({target[t]}) = {n(probs[t][ids[t]])}, loss = {n(-np.log(probs[t][ids[t]]))}")
        loss = seq_loss(probs)
        return Step(title, formula, lines(*out, f"L = {n(loss)}", *extra),
                    {f"P_{key}": np.array(probs), f"loss_{key}": loss}, note)

    steps = [Step(
        "Set-up",
        "Hₜ = tanh(W_HH Hₜ₋₁ + W_HY Yₜ₋₁ + W_HC C + b),  Pₜ = softmax(W_O Hₜ),  H₀ = C",
        lines(f"target = {' '.join(target)}; vocabulary V = {V}: {', '.join(vocab)}",
              f"C = {v(C)}; starting weights drawn with seed {seed}",
              f"training: {train_steps} gradient-descent updates, η = {n(lr)}, for each regime"),
        {"C": C, "W_O": start["W_O"]},
        "One small decoder; two copies of it are trained from the same start, one fed the "
        "reference tokens (teacher forcing), one fed its own guesses (free running).",
    )]

    # before training: the untrained decoder fed both ways (the contrast)
    _, p_tf0 = _forward(start, C, forced_in)
    fed_fr0, p_fr0 = _greedy(start, C, T)
    loss_tf0, loss_fr0 = seq_loss(p_tf0), seq_loss(p_fr0)
    pred_tf0 = [vocab[int(np.argmax(p))] for p in p_tf0]
    pred_fr0 = [vocab[int(np.argmax(p))] for p in p_fr0]
    steps.append(run_step(
        "Before training, fed the reference",
        "teacher forcing: input at step t is Yₜ₋₁ (the reference); L = Σₜ −log Pₜ(Yₜ)",
        p_tf0, forced_in, "forced_before",
        "An untrained decoder is wrong whatever it is fed: the correct prefix does not make "
        f"\"{target[-1]}\" likely (P = {n(p_tf0[-1][ids[-1]])}). Teacher forcing does not "
        "make predictions right; it makes each step's loss a fair test of one prediction.",
    ))
    steps.append(run_step(
        "Before training, fed its own guesses",
        "free running: input at step t is Ŷₜ₋₁ = argmax Pₜ₋₁",
        p_fr0, fed_fr0, "free_before",
        f"After the first wrong guess the inputs ({words(fed_fr0)}) leave the reference, so "
        "the later losses score predictions made from a history the target never contains.",
    ))

    # training, both regimes from the same start
    tf_params, tf_losses, _ = _train(start, C, ids, train_steps, lr, forced=True)
    fr_params, fr_losses, fr_fed = _train(start, C, ids, train_steps, lr, forced=False)
    steps.append(Step(
        "Train with teacher forcing",
        "θ ← θ − η ∂L/∂θ,  inputs <start>, Y₁, …, Y_{T−1} at every update (BPTT for ∂L/∂θ)",
        lines(f"inputs every time: {words(forced_in)}",
              f"L after 0, 1, …, {train_steps} updates: " + ", ".join(n(x, 3) for x in tf_losses)),
        {"losses_forced": np.array(tf_losses)},
        "The inputs never change, so every update pushes on the same three predictions, each "
        "made from the correct history.",
    ))
    changes = [k for k in range(1, len(fr_fed)) if fr_fed[k] != fr_fed[k - 1]]
    steps.append(Step(
        "Train free running",
        "θ ← θ − η ∂L/∂θ,  inputs <start>, Ŷ₁, …, Ŷ_{T−1}: the current model's own guesses",
        lines(*(f"after {k} update{'' if k == 1 else 's'}: inputs {words(fed)}, L = {n(fr_losses[k], 3)}"
                for k, fed in enumerate(fr_fed) if k == 0 or k in changes or k == len(fr_fed) - 1)),
        {"losses_free": np.array(fr_losses)},
        "Whenever a guess changes, the next step's input changes with it, so what the model "
        "learned about the old input no longer applies: the loss falls more slowly and can "
        "jump back up." if changes else
        "The guesses never changed during training, so the inputs stayed the same.",
    ))

    # after training
    _, p_tf1 = _forward(tf_params, C, forced_in)
    gen_tf1, p_gen_tf1 = _greedy(tf_params, C, T)
    gen_fr1, p_gen_fr1 = _greedy(fr_params, C, T)
    loss_tf1, loss_gen_tf, loss_gen_fr = seq_loss(p_tf1), seq_loss(p_gen_tf1), seq_loss(p_gen_fr1)
    out_tf = [vocab[int(np.argmax(p))] for p in p_gen_tf1]
    out_fr = [vocab[int(np.argmax(p))] for p in p_gen_fr1]
    steps.append(run_step(
        "After training with teacher forcing",
        "fed the reference, as in training; then generating on its own",
        p_tf1, forced_in, "forced_after",
        f"From the correct prefix the last step now gives \"{target[-1]}\" probability "
        f"{n(p_tf1[-1][ids[-1]], 3)}: what the lesson describes, and what the untrained "
        f"decoder could not do ({n(p_tf0[-1][ids[-1]], 4)})."
        if vocab[int(np.argmax(p_tf1[-1]))] == target[-1] else
        f"After {train_steps} updates the last step still misses \"{target[-1]}\"; try more "
        "train_steps or a larger lr.",
        extra=[f"generating: {' '.join(out_tf)} (L = {n(loss_gen_tf)})"],
    ))
    steps.append(run_step(
        "After training free running",
        "generating on its own, as at inference",
        p_gen_fr1, gen_fr1, "free_after",
        "Same start, same number of updates, same learning rate; only the inputs fed during "
        "training differed.",
    ))
    steps.append(Step(
        "Compare",
        "L = Σₜ −log P(Yₜ) of the sentence each model generates",
        lines(f"before training:               generates {' '.join(pred_fr0)}, L = {n(loss_fr0)}",
              f"trained with teacher forcing:  generates {' '.join(out_tf)}, L = {n(loss_gen_tf)}",
              f"trained free running:          generates {' '.join(out_fr)}, L = {n(loss_gen_fr)}"),
        {"loss_generated_forced": loss_gen_tf, "loss_generated_free": loss_gen_fr},
        ("No updates were made, so both copies are still the untrained decoder." if train_steps == 0
         else "Teacher forcing trained the decoder faster: every update taught it the reference "
         "transitions, while free running spent updates on histories that its next guesses "
         "replaced." if loss_gen_tf < loss_gen_fr else
         "Here free running did as well: with these settings its guesses reached the reference "
         "early, after which the two regimes feed the same inputs."),
    ))

    f_tf = _engine_run(tf_params, C, forced_in, ids, V)
    f_fr = _engine_run(fr_params, C, gen_fr1, ids, V)
    f_before = _engine_run(start, C, forced_in, ids, V)
    trace = Trace(
        name="teacher-forcing",
        title="Teacher forcing vs free running",
        section=3,
        inputs=inputs,
        steps=steps,
        result={"predicted_forced_before": pred_tf0, "predicted_free_before": pred_fr0,
                "fed_free_before": [readable[i] for i in fed_fr0],
                "loss_forced_before": loss_tf0, "loss_free_before": loss_fr0,
                "p_last_forced_before": float(p_tf0[-1][ids[-1]]),
                "losses_forced": np.array(tf_losses), "losses_free": np.array(fr_losses),
                "predicted_forced_after": [vocab[int(np.argmax(p))] for p in p_tf1],
                "p_target_forced_after": np.array([p_tf1[t][ids[t]] for t in range(T)]),
                "loss_forced_after": loss_tf1,
                "generated_forced": out_tf, "generated_free": out_fr,
                "p_target_free_after": np.array([p_gen_fr1[t][ids[t]] for t in range(T)]),
                "loss_generated_forced": loss_gen_tf, "loss_generated_free": loss_gen_fr},
        fused={"loss_forced_before": f_before[1],
               "predicted_forced_after": [vocab[i] for i in f_tf[0]],
               "loss_forced_after": f_tf[1],
               "generated_free": [vocab[i] for i in f_fr[0]],
               "loss_generated_free": f_fr[1]},
        source=source_of(INPUTS, inputs, "built"),
        summary=f"A small seeded decoder before training, then after {train_steps} updates "
                "fed the reference tokens (teacher forcing) or its own guesses (free running).",
    )
    if same_as_defaults(INPUTS, inputs, "vocab"):
        trace.errata.append(Erratum(
            where="§3 worked example (error cascade)",
            printed="\"Vocabulary size is 5\"",
            computed=f"the story uses {len(vocab)} output words: {', '.join(vocab)}",
            why="The wrong guesses (A, dog, ran, feline) come on top of the three target words, "
                "so a vocabulary of 5 cannot hold them all.",
            kind="miscount", id="tf-vocabulary-size",
        ))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: the notes' story with another seed, size, number of updates and rate."""
    return {"target": ["The", "cat", "sat"], "vocab": ["The", "A", "cat", "dog", "sat", "ran", "feline"],
            "d_h": int(_draw.choice(rng, [3, 4])), "seed": _draw.seed(rng),
            "train_steps": int(rng.integers(0, 11)), "lr": float(_draw.choice(rng, [0.1, 0.2, 0.5, 1.0]))}
