"""Decoding strategies (lecture §10): greedy, beam search, top-k / top-p / temperature sampling.

The lecture's own greedy-vs-beam table lives with the traces that replay it
(:mod:`engine.traces.lecture_beam`): it builds trace errata, which decoding knows nothing of.

Modules:

- :mod:`~engine.decoding.models` — the :class:`StepModel` protocol a decoder drives,
  :class:`TableModel` (n-gram table) and :class:`FunctionModel` (any step function).
- :mod:`~engine.decoding.search` — :func:`greedy_decode`, :func:`beam_search` (Hugging Face
  ``generate`` semantics; HF or GNMT length normalisation), :func:`top_candidates`.
- :mod:`~engine.decoding.sampling` — :func:`top_k_filter`, :func:`top_p_filter`,
  :func:`apply_temperature`, :func:`filtered_probs`, :func:`sample_token`,
  :func:`sample_decode` (seeded, inverse CDF).

The StepModel protocol (what the lab's seq2seq implements, or wraps in FunctionModel)::

    class StepModel(Protocol):
        vocab: tuple[str, ...]        # words; index = token id; V = len(vocab)
        bos_token: int | None         # fed at the first step
        eos_token: int | None         # ends a sentence (None: only max_length ends it)
        initial_state: Any            # e.g. the encoder's context vector
        def step(self, state, token) -> tuple[np.ndarray, Any]:
            '''Feed `token` in `state`; return (log P(next | ...) of shape (V,), new_state).
            Must not modify `state` in place (beam search reuses it).'''

Decoders call ``model.step(model.initial_state, model.bos_token)`` for the first
distribution, then ``model.step(state, y_t)`` after each generated token. Sequences in results
exclude BOS and include EOS; L (for length normalisation) = generated tokens including EOS.

Example::

    from engine.decoding import FunctionModel, beam_search
    model = FunctionModel(decoder_step, initial_state=context, bos_token="<sos>",
                          vocab=target_words, eos_token="<eos>")
    result = beam_search(model, beam_width=4, max_length=20, length_penalty=("gnmt", 0.6))
    result.best.words, result.best.score
"""

from __future__ import annotations

from engine.decoding.models import FunctionModel, StepModel, TableModel, score_sequence
from engine.decoding.results import (
    BeamResult,
    BeamStep,
    Candidate,
    GreedyResult,
    GreedyStep,
    Hypothesis,
    SampleResult,
    SampleStep,
    Tie,
)
from engine.decoding.sampling import (
    TOP_P_EPS,
    apply_temperature,
    filter_scores,
    filtered_probs,
    sample_decode,
    sample_token,
    top_k_filter,
    top_p_filter,
    top_p_keep,
)
from engine.decoding.search import (
    TIE_TOL,
    beam_search,
    greedy_decode,
    length_normalised_score,
    length_penalty_factor,
    top_candidates,
)

__all__ = [
    "TIE_TOL", "TOP_P_EPS",
    "StepModel", "TableModel", "FunctionModel", "score_sequence",
    "greedy_decode", "beam_search", "top_candidates", "length_penalty_factor", "length_normalised_score",
    "apply_temperature", "top_k_filter", "top_p_filter", "top_p_keep", "filter_scores", "filtered_probs",
    "sample_token", "sample_decode",
    "Hypothesis", "Candidate", "BeamStep", "BeamResult", "Tie",
    "GreedyStep", "GreedyResult", "SampleStep", "SampleResult",
]
