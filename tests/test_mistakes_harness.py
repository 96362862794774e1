"""A fast sample of the simulated-student harness (the full table: benchmarks/diagnosis.py).

Targets of the issue: recall ≥ 90 %, precision ≥ 95 %, false alarms on random numbers ≤ 2 %,
right answers never diagnosed. A few problems of a few computations are too few to hold a
2 % figure tightly, so the sample's false-alarm bound is looser; the full table holds it.
"""

from __future__ import annotations

import numpy as np

from engine.mistakes import students

SAMPLE = ["qkv", "scoring-compare", "masking", "cross-entropy", "dynamic-context", "top-k",
          "positional-encoding", "sequence-loss"]


def test_a_sample_of_simulated_students_meets_the_targets():
    per, total = students.run(SAMPLE, problems=3, seed=5)
    assert total.planted > 200
    assert total.right_named == 0
    assert total.recall >= 0.90
    assert total.precision >= 0.95
    assert total.false_alarms <= 0.05


def test_students_type_two_to_four_significant_digits():
    rng = np.random.default_rng(0)
    values, decimals = students.typed(np.array([0.47108, 12.345, 0.0071234, 0.0, 1048576.0]), rng)
    assert values[3] == 0 and values[4] == 1048576  # zero and a big count are typed as they are
    for v, x, d in zip(values[:3], [0.47108, 12.345, 0.0071234], decimals[:3]):
        assert abs(v - x) < 10.0 ** -d  # rounded or cut off at the digits typed
        digits = len(f"{v:.{d}f}".replace("-", "").replace(".", "").lstrip("0"))
        assert 2 <= digits <= 4
