"""Every trace draws fresh inputs a student can work by hand, and its fused check holds on them."""

from __future__ import annotations

import numpy as np
import pytest

import engine.traces as T
from engine.trace import coerce_inputs

NAMES = list(T.REGISTRY)
SEEDED = {"seed"}  # whole numbers that seed a trace's own draws, not numbers to work with


def _on_grid(x: np.ndarray) -> bool:
    """Small integers, or numbers with one or two decimals (steps of 0.05 at the finest)."""
    return bool(np.allclose(x * 20, np.round(x * 20), atol=1e-9))


@pytest.mark.parametrize("name", NAMES)
def test_draws_are_valid_reproducible_and_keep_the_fused_check(name):
    specs = T.input_specs(name)
    for seed in range(3 if name == "scaling" else 12):
        inputs = T.draw_inputs(name, np.random.default_rng(seed))
        again = T.draw_inputs(name, np.random.default_rng(seed))
        assert repr(inputs) == repr(again)
        coerce_inputs(specs, inputs)  # valid for INPUTS (raises otherwise)
        trace = T.build(name, inputs)
        assert trace.disagreements() == [], (name, seed)


@pytest.mark.parametrize("name", NAMES)
def test_draws_are_calculator_friendly_and_worked_example_sized(name):
    for seed in range(8):
        inputs = T.draw_inputs(name, np.random.default_rng(seed))
        for key, value in inputs.items():
            if key in SEEDED or value is None or isinstance(value, (str, bool)):
                continue
            if isinstance(value, list) and value and isinstance(value[0], str):
                assert len(value) <= 17, (name, key)  # the review is the longest list of words
                continue
            x = np.asarray(value, dtype=float)
            assert _on_grid(x), (name, key, x)
            assert x.ndim == 0 or max(x.shape) <= 10, (name, key, x.shape)


def test_different_seeds_give_different_problems():
    for name in NAMES:
        a = T.draw_inputs(name, np.random.default_rng(1))
        b = T.draw_inputs(name, np.random.default_rng(2))
        c = T.draw_inputs(name, np.random.default_rng(3))
        assert len({repr(a), repr(b), repr(c)}) > 1, name
