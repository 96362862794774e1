"""A trainable seq2seq in numba: fixed context vs Bahdanau attention (lecture §1–4, §12).

Modules: :mod:`.model` (config, parameters, initialisation), :mod:`._kernels` (forward and
backward through time, Adam), :mod:`.train` (loss and gradient, teacher forcing, one
training step), :mod:`.workspace` (the work arrays a training loop reuses), :mod:`.decode`
(free-running greedy decoding, step function for :mod:`engine.decoding`).

References: Cho et al. 2014 (GRU, RNN encoder-decoder); Bahdanau, Cho & Bengio 2014
(additive attention, "RNNsearch"); Bengio et al. 2015 (scheduled sampling);
Kingma & Ba 2015 (Adam).
"""

from engine.seq2seq.decode import DecoderState, Seq2SeqStepModel, greedy_decode, step_function
from engine.seq2seq.model import CELLS, DECODERS, PARAM_NAMES, Seq2Seq, Seq2SeqConfig
from engine.seq2seq.train import Adam, Batch, StepResult, check_batch, loss_and_grad, train_step
from engine.seq2seq.workspace import Workspace

__all__ = [
    "CELLS", "DECODERS", "PARAM_NAMES", "Adam", "Batch", "DecoderState", "Seq2Seq",
    "Seq2SeqConfig", "Seq2SeqStepModel", "StepResult", "check_batch",
    "greedy_decode", "loss_and_grad",
    "step_function", "train_step", "Workspace",
]
