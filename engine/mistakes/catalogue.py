"""The catalogue of mistakes students make in this lecture, commonest first.

Each :class:`Mistake` is a record: a stable id (an interface: quiz items, stored answers,
tests and scripts name it), a one-line title, the lecture section and lesson it belongs to,
the lesson paragraph it points to, and an explanation template. The *computation* of a
mistake is not here: every trace's arithmetic is written once in
``engine.mistakes.computations`` with each slip behind a switch, so a mistake's number always
comes from running it.

Explanation templates are ``str.format`` strings. Every template may use ``{value}`` (what the
mistake gives for the value checked), ``{expected}`` (the right value) and ``{name}`` (the
value's name); the other fields are facts the computation records about this problem
(``{d_k}``, ``{sqrt_dk}``, …), and ``tests/test_mistakes.py`` checks that every computation a
mistake applies to supplies them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake (see the module docstring)."""

    id: str
    title: str
    section: int
    lesson: str
    anchor: str
    explanation: str


_F, _W, _P = "Formal statement", "Worked example", "Pitfalls"

_RECORDS = (
    # ---------------------------------------------------------------- scores and softmax
    Mistake("no-scale", "1/√d_k left out", 8, "scoring", _F,
            "{value} is what the raw dot products give: divide each q·k by √d_k = √{d_k} "
            "≈ {sqrt_dk}."),
    Mistake("rounded-intermediates", "Intermediates rounded to 2 decimals", 5, "qkv", _W,
            "{value} is what you get when every intermediate (scores, exponentials, sums) is "
            "rounded to two decimals before the next step; keep four decimals until the end "
            "and round only the answer."),
    Mistake("softmax-wrong-axis", "Softmax over the queries, not the keys", 6, "self-attention", _F,
            "{value} comes from normalising each column (all queries for one key); each row is "
            "one query's distribution over the keys, so the softmax runs along the row."),
    Mistake("scale-by-dk", "Divided by d_k instead of √d_k", 8, "scoring", _F,
            "{value} is what dividing by d_k = {d_k} gives; the scale is its square root, "
            "√{d_k} ≈ {sqrt_dk}."),
    Mistake("no-exp", "Scores divided by their sum (no exponentials)", 5, "qkv", _F,
            "{value} is each score over the sum of the scores; softmax first takes e^score, "
            "so every weight is positive, then divides by the sum of the exponentials."),
    Mistake("no-normalise", "Exponentials not divided by their sum", 5, "qkv", _F,
            "{value} are the exponentials e^score themselves; divide each by their sum so the "
            "weights add up to 1."),
    Mistake("softmax-term-dropped", "A repeated term counted once in the softmax sum", 5, "qkv", _W,
            "{value} is what you get when equal exponentials enter the sum only once (and then "
            "share one weight); the sum has one term per key, e.g. {terms}."),
    Mistake("zero-score-zero-weight", "A score of 0 given weight 0", 7, "cross-attention", _W,
            "{value} treats a score of 0 as no weight at all; e^0 = 1, so every key with score "
            "0 still adds 1 to the sum and gets a share."),
    Mistake("transposed-weight", "Weight matrix transposed (x·W where W·x is meant)", 1,
            "encoder-decoder", _F,
            "{value} uses the transpose of a square weight matrix; check the convention: the "
            "lecture multiplies W x (row r of W against x), the projections x W (x against "
            "column c)."),
    Mistake("weights-times-keys", "Weights times the keys, not the values", 5, "qkv", _F,
            "{value} is Σ α_j K_j; the output mixes the value vectors, Σ α_j V_j. Keys only "
            "decide the weights."),
    Mistake("values-not-projected", "Weights times the embeddings, not V", 5, "qkv", _F,
            "{value} is Σ α_j X_j, the raw embeddings; the output mixes the values V_j = X_j W_V."),
    Mistake("scores-transposed", "K Qᵀ where Q Kᵀ is meant", 6, "self-attention", _F,
            "{value} comes from the transposed score matrix; row i of Q Kᵀ holds query i against "
            "every key, and the softmax runs along that row."),
    Mistake("scale-by-dmodel", "√d_model instead of the head's √d_k", 6, "self-attention", _F,
            "{value} divides by √{d_model} ≈ {sqrt_dmodel}, the model width; a head scales by "
            "its own key width, √{d_k} ≈ {sqrt_dk}."),
    Mistake("distance-not-squared", "Distance used without squaring", 8, "scoring", _F,
            "{value} comes from −‖q − k‖, the plain distance; the score is minus the squared "
            "distance, Σ (q_c − k_c)², e.g. {sq_first} for the first key, not {dist_first}."),
    Mistake("distance-sign-dropped", "Minus sign of −‖q − k‖² dropped", 8, "scoring", _F,
            "{value} scores keys by +‖q − k‖², so the farthest key wins; the score is minus "
            "the squared distance, so the nearest key gets the largest weight."),
    # ---------------------------------------------------------------- masks
    Mistake("mask-zero", "Masked score set to 0, not −∞", 8, "scoring", _F,
            "{value} gives masked positions a score of 0, so e^0 = 1 still buys them weight; "
            "a mask sets the score to −∞, whose exponential is exactly 0."),
    Mistake("mask-after-softmax", "Weights zeroed after the softmax, not renormalised", 8,
            "scoring", _F,
            "{value} zeroes the masked weights after the softmax, so a row no longer sums to "
            "1; mask the scores (−∞) before the softmax instead."),
    Mistake("causal-transposed", "Causal mask transposed (future allowed, past hidden)", 8,
            "scoring", _F,
            "{value} lets token i see the tokens after it and hides the ones before; the causal "
            "mask allows j ≤ i, a lower triangle."),
    Mistake("padding-queries-kept", "Padding rows not masked", 8, "scoring", _P,
            "{value} lets the padding positions ask questions too; a padding token neither "
            "asks nor answers, so its row of weights is all 0."),
    # ---------------------------------------------------------------- RNNs (§1–§4)
    Mistake("tanh-left-out", "tanh left out", 1, "encoder-decoder", _F,
            "{value} is the sum before the non-linearity; apply tanh to every entry of the "
            "pre-activation."),
    Mistake("rnn-bias-forgotten", "The bias b forgotten", 1, "encoder-decoder", _F,
            "{value} leaves out the bias b = {bias}; add it to the sum before the tanh."),
    Mistake("rnn-previous-state-dropped", "W_HH H_{t−1} left out", 1, "encoder-decoder", _F,
            "{value} uses only the current word; each state also adds W_HH H_{{t−1}}, the "
            "memory of the words before."),
    Mistake("decoder-context-dropped", "W_HC C left out of the decoder step", 1,
            "encoder-decoder", _F,
            "{value} leaves out W_HC C; the fixed-context decoder adds the context at every "
            "step, not only at the start."),
    Mistake("context-mean-states", "Context taken as the mean of the states", 2,
            "context-vector", _F,
            "{value} averages the encoder states; without attention the context is just the "
            "last state, C = H_T."),
    Mistake("context-last-state", "The fixed context H_T used instead of Σ α H", 4,
            "attention-intro", _F,
            "{value} is the last encoder state, the fixed context of §2; with attention each "
            "step gets its own blend C_t = Σ_i α_ti H_i."),
    Mistake("weights-read-by-column", "Weights read down a column", 4, "attention-intro", _W,
            "{value} takes α from a column (one source word, every target word); the weights "
            "of target word t are row t of the table."),
    Mistake("bahdanau-current-state", "s_t used where s_{t−1} is meant", 4, "attention-intro", _F,
            "{value} scores with the state after the word is written (s_t); the attention for "
            "word t is computed from the previous state s_{{t−1}}."),
    # ---------------------------------------------------------------- teacher forcing, loss
    Mistake("teacher-forcing-fed-prediction", "Teacher forcing fed the prediction", 3,
            "teacher-forcing", _F,
            "{value} is what free running gives: teacher forcing feeds the reference word "
            "Y_{{t−1}} at every step, whatever the model predicted."),
    Mistake("free-running-fed-reference", "Free running fed the reference", 3, "teacher-forcing", _F,
            "{value} is what teacher forcing gives: free running feeds the model's own previous "
            "guess, right or wrong."),
    Mistake("loss-against-prediction", "Loss taken on the predicted word", 3, "teacher-forcing", _P,
            "{value} scores the word the model liked best; the loss is −ln P of the reference "
            "word, however unlikely the model found it."),
    Mistake("ce-log10", "log₁₀ instead of ln", 12, "training", _F,
            "{value} uses log base 10; cross-entropy uses the natural log (log₁₀ x = ln x / 2.303)."),
    Mistake("ce-log2", "log₂ instead of ln", 12, "training", _F,
            "{value} is in bits (log base 2); the loss uses the natural log, ln x = log₂ x · 0.693."),
    Mistake("ce-mean-not-sum", "Loss averaged where the sum is asked", 12, "training", _F,
            "{value} is the mean over the {T} steps; this loss is the sum L = Σ_t L_t."),
    Mistake("ce-sum-not-mean", "Loss summed where the mean is asked", 12, "training", _F,
            "{value} is the sum over the steps; this loss is the mean, the sum divided by the "
            "{count} real tokens."),
    Mistake("ce-counts-padding", "Padding counted in the loss", 12, "training", _P,
            "{value} counts the padded positions; padding targets are ignored (ignore_index), "
            "so only the {count} real tokens enter the loss."),
    Mistake("ce-grad-wrt-prob", "Gradient taken with respect to P, not the logits", 12,
            "training", _F,
            "{value} is ∂L/∂P (−1/P at the reference, 0 elsewhere); with respect to the logits "
            "the gradient is P − onehot(y)."),
    Mistake("ce-grad-onehot-forgotten", "One-hot not subtracted in P − y", 12, "training", _F,
            "{value} is P itself; subtract 1 at the reference word: ∂L/∂z = P − onehot(y)."),
    Mistake("grad-sign-flipped", "Gradient with the wrong sign", 12, "training", _F,
            "{value} has the opposite sign of the gradient; check the minus signs (the loss "
            "is −ln P, and the update subtracts η·gradient)."),
    Mistake("softmax-grad-diagonal", "Softmax Jacobian without its cross terms", 12, "training", _F,
            "{value} keeps only α_j(1 − α_j), the diagonal; the Jacobian is diag(α) − ααᵀ, so "
            "every other weight contributes −α_j α_k."),
    Mistake("backward-no-scale", "1/√d_k left out of the backward pass", 12, "training", _F,
            "{value} forgets that the forward divided the scores by √{d_k} ≈ {sqrt_dk}; the "
            "gradients into Q and K are divided by it too."),
    Mistake("grad-transpose-missing", "αᵀ dO written α dO", 12, "training", _F,
            "{value} is α dO; each value V_j collects the weights it received, column j of α: "
            "dV = αᵀ dO."),
    Mistake("tanh-derivative-wrong", "tanh′ taken as 1 − x² of the input", 12, "training", _F,
            "{value} squares the pre-activation; tanh′(x) = 1 − tanh(x)², the square of the "
            "output t."),
    Mistake("update-uphill", "Update added the gradient", 12, "training", _F,
            "{value} moves along the gradient; gradient descent subtracts it: W ← W − η ∂L/∂W."),
    # ---------------------------------------------------------------- decoding
    Mistake("temperature-multiplied", "Logits multiplied by T", 10, "decoding", _F,
            "{value} multiplies the logits by T; temperature divides them: softmax(z / T)."),
    Mistake("temperature-on-probs", "Probabilities divided by T and renormalised", 10,
            "decoding", _F,
            "{value} divides the probabilities by T, which renormalising undoes; T acts on the "
            "logits, before the softmax."),
    Mistake("top-k-not-renormalised", "Top-k kept but not renormalised", 10, "decoding", _F,
            "{value} keeps the top words' old probabilities; divide them by their total, "
            "{mass}, so they sum to 1."),
    Mistake("top-k-ties-dropped", "Words tied with the k-th dropped", 10, "decoding", _F,
            "{value} keeps exactly k words; a word tied with the k-th probability is kept too."),
    Mistake("top-p-excludes-boundary", "Stopped before the word that crosses p", 10, "decoding", _F,
            "{value} stops before the mass reaches p; the nucleus keeps the word that carries the "
            "running total to p = {p} or beyond."),
    Mistake("top-p-not-renormalised", "Nucleus kept but not renormalised", 10, "decoding", _F,
            "{value} keeps the nucleus's old probabilities; divide them by the nucleus mass, "
            "{mass}."),
    Mistake("beam-adds-probs", "Probabilities added instead of log-probabilities", 10,
            "decoding", _F,
            "{value} adds probabilities; a sequence's probability is their product, so its score "
            "adds the log-probabilities."),
    Mistake("logs-multiplied", "Log-probabilities multiplied, not added", 10, "decoding", _F,
            "{value} multiplies the logs; log(p·q) = log p + log q, so the scores add."),
    Mistake("greedy-where-beam", "Only the best prefix extended (greedy, not beam)", 10,
            "decoding", _F,
            "{value} extends only the single best prefix; beam search keeps the K best prefixes "
            "alive and extends every one of them."),
    Mistake("length-norm-without-eos", "Length normalisation without counting </s>", 10,
            "decoding", _F,
            "{value} divides by a length that leaves out </s>; L counts every generated token, "
            "the end token included."),
    # ---------------------------------------------------------------- reading, pooling
    Mistake("entropy-nats", "Entropy in nats where bits are asked", 11, "visualisation", _F,
            "{value} uses the natural log; in bits divide by ln 2: H = −Σ α log₂ α."),
    Mistake("shape-transposed", "Rows and columns swapped", 11, "visualisation", _W,
            "{value} swaps the two sides; rows are the words being generated, columns the source "
            "words they attend to."),
    Mistake("pool-counts-padding", "Mean pooling over the padding too", 9, "pooling", _P,
            "{value} divides by all {n} positions; padding carries no reading, so average over "
            "the {count} real ones."),
    Mistake("pool-divides-by-n", "Attention pooling divided by n", 9, "pooling", _F,
            "{value} divides the weighted sum by n = {n}; the weights already sum to 1, so "
            "Σ α_i V_i is the answer."),
    Mistake("share-is-weight", "Contribution read as the weight", 9, "pooling", _W,
            "{value} is the weights α; a reading's share of the output is α_i V_i / Σ_j α_j V_j."),
    # ---------------------------------------------------------------- the Transformer (§13)
    Mistake("multihead-no-wo", "W_O left out after concatenating", 13, "transformer", _F,
            "{value} is the concatenation itself; multi-head attention then mixes the heads "
            "with W_O."),
    Mistake("params-no-wo", "Parameter count without W_O", 13, "transformer", _F,
            "{value} counts W_Q, W_K and W_V only; W_O adds another h·d_v·d_model = {wo} weights."),
    Mistake("params-per-head-dmodel", "Every head given d_model × d_model projections", 13,
            "transformer", _P,
            "{value} gives each head full d_model × d_model matrices; the heads share d_model, "
            "each projecting to d_model / h = {d_k}."),
    Mistake("flops-no-factor-2", "FLOPs without the factor 2", 13, "transformer", _F,
            "{value} counts one operation per multiply-add; a FLOP count has two (a multiply and "
            "an add), so an (m×k)(k×p) product costs 2mkp."),
    Mistake("exponentials-one-head", "Exponentials of one head only", 13, "transformer", _F,
            "{value} counts one head's n² scores; each of the h = {h} heads has its own."),
    Mistake("pe-sin-cos-swapped", "sin and cos swapped", 13, "transformer", _F,
            "{value} puts cos in the even columns; PE(pos, 2i) = sin, PE(pos, 2i+1) = cos."),
    Mistake("pe-i-not-2i", "base^(i/d) instead of base^(2i/d)", 13, "transformer", _F,
            "{value} uses i/d in the exponent; the frequency of pair i is 1 / base^(2i/d)."),
    Mistake("calculator-degrees", "Calculator in degrees", 13, "transformer", _W,
            "{value} takes the angles in degrees; the sines and cosines here take radians."),
    Mistake("variance-as-std", "Standard deviation given for the variance", 8, "scoring", _F,
            "{value} is the standard deviation √Var; Var(q·k) = d_k·σ_q²·σ_k² itself."),
    Mistake("variance-sum-not-product", "σ_q² + σ_k² where σ_q²·σ_k² is meant", 8, "scoring", _F,
            "{value} adds the variances; Var(q_i k_i) = σ_q²·σ_k² for independent zero-mean "
            "entries, so Var(q·k) = d_k·σ_q²·σ_k²."),
)

MISTAKES: dict[str, Mistake] = {m.id: m for m in _RECORDS}
"""id → :class:`Mistake`, in catalogue order (commonest first)."""

RANK: dict[str, int] = {m.id: i for i, m in enumerate(_RECORDS)}
"""id → position in the catalogue (0 = commonest), for ranking diagnoses."""
