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


def test_students_type_two_to_four_significant_digits_with_one_precision():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = np.array([0.47108, 0.12345, 0.0071234, 0.0])
        values, decimals = students.typed(x, rng)
        d = int(decimals[0])
        assert (decimals == d).all() and values[3] == 0  # one precision for the answer
        assert np.all(np.abs(values - x) < 10.0 ** -d)  # rounded or cut off at it
        assert 2 <= d <= 4  # 2-4 significant digits of the largest entry, 0.47108
    values, decimals = students.typed(np.array(1048576.0), rng)
    assert values == 1048576 and decimals[0] == 0  # a big count is typed in full
