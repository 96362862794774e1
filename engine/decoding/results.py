"""Result records of the decoders: small frozen dataclasses a trace or the TUI can draw.

Token sequences never include BOS; a finished sequence ends with EOS, which counts in its
length ``L`` (Hugging Face's ``generated_len``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Hypothesis:
    """A generated sequence.

    Attributes:
        tokens: generated token ids, BOS excluded, EOS included when ``finished``.
        words: the same as words.
        logp: Σ log P(y_t | y_<t) (natural log).
        score: ``logp`` after length normalisation (equal to ``logp`` without it).
        length: L = len(tokens).
        finished: True when it ended with EOS, False when stopped by the maximum length.
        step_logps: log P of each token, length L.
    """

    tokens: tuple[int, ...]
    words: tuple[str, ...]
    logp: float
    score: float
    length: int
    finished: bool
    step_logps: tuple[float, ...] = ()

    @property
    def text(self) -> str:
        """The words joined by spaces."""
        return " ".join(self.words)


@dataclass(frozen=True)
class Tie:
    """Hypotheses whose scores agree within the tie tolerance, and how their order was fixed.

    Attributes:
        t: the step (1-based) at which the tie was met; for the final n-best, the last step.
        where: ``"candidates"`` (ranking one step's candidates) or ``"n-best"``.
        sequences: the tied sequences (token ids), in the order the engine put them.
        words: the same as words.
        scores: their scores, same order (they differ by at most the tolerance).
        rule: how the order was decided.
        decisive: True when the tied hypotheses were treated differently (one kept, one
            dropped; or first vs second in the n-best).
    """

    t: int
    where: str
    sequences: tuple[tuple[int, ...], ...]
    words: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    rule: str
    decisive: bool


@dataclass(frozen=True)
class Candidate:
    """One extension ``prefix + token`` considered at a beam step.

    Attributes:
        t: step (1-based) = length of ``prefix + (token,)``.
        parent: position of the extended hypothesis in the previous step's beam
            (``steps[t - 2].beam[parent]``; at t = 1 the only parent, 0, is the empty start).
        prefix: tokens of the extended hypothesis.
        token: the new token; ``word`` is its word.
        logp: log P(token | prefix).
        cum_logp: Σ log P over ``prefix + (token,)``: what candidates are ranked by.
        score: the length-normalised score it would get in the finished pool (L = t).
        rank: position in this step's ranking (0 = best; ties ordered by the tie rule).
        status: ``"beam"`` (kept, alive), ``"finished"`` (ended with EOS, entered the pool),
            ``"eos-dropped"`` (ended with EOS but ranked >= K, or not better than the K
            finished hypotheses already pooled), ``"pruned"`` (not kept).
    """

    t: int
    parent: int
    prefix: tuple[int, ...]
    token: int
    word: str
    logp: float
    cum_logp: float
    score: float
    rank: int
    status: str

    @property
    def kept(self) -> bool:
        """Survived as a live hypothesis."""
        return self.status == "beam"

    @property
    def finished(self) -> bool:
        """Ended with EOS and entered the finished pool."""
        return self.status == "finished"

    @property
    def tokens(self) -> tuple[int, ...]:
        """``prefix + (token,)``."""
        return self.prefix + (self.token,)


@dataclass(frozen=True)
class BeamStep:
    """What happened at step t of beam search.

    Attributes:
        t: the step (1-based).
        candidates: the ranked candidates, best first: the top 2K (plus any tied with the
            2K-th within ``tie_tol``), or every finite one when ``record="all"``.
        beam: the live hypotheses after the step (at most K), best first.
        pool: the finished pool after the step (at most K), best first.
        evicted: finished hypotheses pushed out of the pool at this step.
        ties: ties among this step's ranked candidates.
    """

    t: int
    candidates: tuple[Candidate, ...]
    beam: tuple[Hypothesis, ...]
    pool: tuple[Hypothesis, ...]
    evicted: tuple[Hypothesis, ...] = ()
    ties: tuple[Tie, ...] = ()


@dataclass(frozen=True)
class BeamResult:
    """The outcome of :func:`engine.decoding.beam_search`.

    Attributes:
        n_best: finished hypotheses, best score first (at most K).
        steps: one :class:`BeamStep` per step.
        ties: ties among ``n_best`` (within ``tie_tol``) and how they were ordered.
        stop_reason: ``"pool-full"``, ``"no-better-live"``, ``"max-length"`` or ``"no-live"``.
        beam_width, max_length, length_penalty, early_stopping, tie_tol: the settings used.
        finalized: live hypotheses that joined the pool unfinished when ``max_length`` was
            reached (HF's ``finalize``), in beam order.
    """

    n_best: tuple[Hypothesis, ...]
    steps: tuple[BeamStep, ...]
    ties: tuple[Tie, ...]
    stop_reason: str
    beam_width: int
    max_length: int
    length_penalty: tuple[str, float] | None
    early_stopping: bool | str
    tie_tol: float
    finalized: tuple[Hypothesis, ...] = ()

    @property
    def best(self) -> Hypothesis:
        """The top hypothesis."""
        return self.n_best[0]


@dataclass(frozen=True)
class GreedyStep:
    """Step t of greedy decoding: the argmax and the runners-up.

    Attributes:
        t: step (1-based).
        token, word: the chosen token.
        logp: its log-probability; ``cum_logp`` the running sum.
        top: the most probable tokens as (token, word, logp), best first.
        tied: tokens whose log-prob ties with the maximum (within ``tie_tol``), when more
            than one; the lowest id is chosen.
    """

    t: int
    token: int
    word: str
    logp: float
    cum_logp: float
    top: tuple[tuple[int, str, float], ...]
    tied: tuple[int, ...] = ()


@dataclass(frozen=True)
class GreedyResult:
    """The outcome of :func:`engine.decoding.greedy_decode`."""

    hypothesis: Hypothesis
    steps: tuple[GreedyStep, ...]
    stop_reason: str  # "eos" or "max-length"


@dataclass(frozen=True)
class SampleStep:
    """Step t of sampling.

    Attributes:
        t: step (1-based).
        token, word: the sampled token.
        logp: log P(token) under the model (before temperature and filtering).
        prob: its probability in the filtered, renormalised distribution.
        u: the uniform draw in [0, 1) that picked it by inverse CDF.
        n_kept: how many tokens survived top-k/top-p filtering.
    """

    t: int
    token: int
    word: str
    logp: float
    prob: float
    u: float
    n_kept: int


@dataclass(frozen=True)
class SampleResult:
    """The outcome of :func:`engine.decoding.sample_decode`."""

    hypothesis: Hypothesis
    steps: tuple[SampleStep, ...]
    stop_reason: str
    settings: dict = field(default_factory=dict)
