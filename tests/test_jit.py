"""engine._jit: the only place fast-math flags are chosen."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine._jit import REDUCTION_FLAGS, jit


def test_fastmath_is_refused_outside_the_named_sets():
    with pytest.raises(TypeError, match="fma=True or reduction=True"):
        jit(lambda x: x, fastmath=True)


def test_named_sets_reach_numba_and_keep_inf_meaning():
    assert "ninf" not in REDUCTION_FLAGS and "fast" not in REDUCTION_FLAGS

    @jit(reduction=True, cache=False)
    def row_max(x):
        m = -np.inf
        for v in x:
            m = max(m, v)
        return m

    assert row_max.targetoptions["fastmath"] == set(REDUCTION_FLAGS)
    # a fully masked row (all −inf) must stay −inf, not be folded away
    assert row_max(np.full(5, -np.inf)) == -math.inf
    assert row_max(np.array([-np.inf, 2.0, -1.0])) == 2.0
