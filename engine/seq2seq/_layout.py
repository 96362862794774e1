"""The layout the seq2seq kernels share: slots of the flat parameter vector, entries of the
``dims`` vector and cell kinds.

See :mod:`engine.seq2seq._kernels` for the model these describe.
"""

from __future__ import annotations

import numpy as np

# Slots of the flat parameter vector, in storage order. They are numpy integers, not Python
# ints: numba compiles a separate copy of a jitted function for every literal Python int it
# is called with (``_mat(theta, offs, 3, ...)`` and ``_mat(theta, offs, 4, ...)`` would be
# two compilations), while a numpy integer is typed as plain int64.
N_SLOTS = 20
(ENC_EMBED, ENC_WX, ENC_WH, ENC_BX, ENC_BH,
 ENC_WX_B, ENC_WH_B, ENC_BX_B, ENC_BH_B,                       # right-to-left direction
 DEC_EMBED, DEC_WY, DEC_WC, DEC_WH, DEC_BX, DEC_BH,
 ATT_WQ, ATT_WK, ATT_V, OUT_W, OUT_B) = np.arange(N_SLOTS, dtype=np.int64)

# entries of the ``dims`` vector
D_V, D_E, D_H, D_A, D_CELL, D_ATTN, D_BI = 0, 1, 2, 3, 4, 5, 6
GRU, RNN = 0, 1

BOS = 1  # start token fed to the decoder's first step (see engine.lab's vocabulary)
