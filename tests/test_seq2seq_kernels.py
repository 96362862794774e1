"""The seq2seq kernels are compiled once each: every caller passes the same argument types.

numba compiles a kernel again for every new mix of argument types (dtype, layout, int vs
float scalars), and each extra compile is seconds of the lab's first run. These checks run
what the lab does (its warm-up, training with a split batch, greedy decoding, the step
model) over every cell and decoder and then count the compiled signatures.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

from engine import lab
from engine.seq2seq import (
    Adam,
    Seq2Seq,
    Seq2SeqConfig,
    Workspace,
    _encoder,
    _kernels,
    _ops,
    greedy_decode,
    loss_and_grad,
    step_function,
    train_step,
)

# the kernels Python calls (the time loops are Python); the rest are only called by these
ENTRY_POINTS = {"_cell_forward", "_cell_backward", "_attend", "_attend_backward", "_output_step",
                "_clip_and_adam"}


def kernels() -> dict[str, Dispatcher]:
    return {name: obj for module in (_ops, _encoder, _kernels) for name, obj in vars(module).items()
            if isinstance(obj, Dispatcher)}


def test_warm_up_compiles_every_kernel_a_lab_run_calls():
    lab.warm_up()
    assert {name for name, d in kernels().items() if d.signatures} >= ENTRY_POINTS


@pytest.mark.parametrize("cell,decoder,bi", [("gru", "attention", True), ("gru", "fixed", False),
                                             ("rnn", "attention", False), ("rnn", "fixed", True)])
def test_every_caller_uses_the_types_warm_up_compiled(cell, decoder, bi):
    lab.warm_up()
    # what this process has compiled so far: the warm-up's types, plus any other feature's
    # (the Transformer lab shares _clip_and_adam with float32 parameters)
    before = {name: set(d.signatures) for name, d in kernels().items()}
    cfg = Seq2SeqConfig(vocab_size=lab.VOCAB_SIZE, embed_dim=3, hidden_dim=4, attn_dim=2, cell=cell,
                        decoder=decoder, bidirectional=bi)
    model = Seq2Seq.init(cfg, seed=2)
    rng = np.random.default_rng(0)
    ws = Workspace()
    opt = Adam(cfg.n_params)
    for parts in (1, 3):                            # a split batch passes row blocks of it
        batch = lab.make_batch("reverse", [1, 4, 2, 3], rng)
        train_step(model, opt, batch, 0.5, rng, ws, parts=parts)
    loss_and_grad(model, batch, 1.0, 0)             # a fresh workspace, Python scalars
    greedy_decode(model, [3, 4, 5], 3)              # a list, no lengths
    greedy_decode(model, batch.src, 2, batch.src_len, keep_attention=True)
    sm = step_function(model, np.array([3, 4, 2]))
    sm.step(sm.step(sm.initial_state, sm.bos_token)[1], np.int32(4))
    added = {name: set(d.signatures) - before[name] for name, d in kernels().items()}
    assert {name: sigs for name, sigs in added.items() if sigs} == {}
    float64 = {name: [s for s in d.signatures if "float32" not in str(s)]
               for name, d in kernels().items()}
    assert all(len(float64[name]) == 1 for name in ENTRY_POINTS), float64
