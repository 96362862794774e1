"""Constants the seq2seq kernels share: the cell kinds and the decoder's start token.

See :mod:`engine.seq2seq._kernels` for the model.
"""

from __future__ import annotations

GRU, RNN = 0, 1  # the ``cell`` argument of the kernels

BOS = 1  # start token fed to the decoder's first step (see engine.lab's vocabulary)
