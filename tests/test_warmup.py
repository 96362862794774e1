"""Every warm-up call reaches a real engine function (a rename must not silently skip one)."""

from __future__ import annotations

import pytest

from tutor.warmup import _tiny_calls, warm_engine


@pytest.mark.parametrize(("name", "call"), _tiny_calls(), ids=[n for n, _ in _tiny_calls()])
def test_each_warm_up_call_runs(name, call):
    call()


def test_warm_engine_reports_progress_in_order():
    seen = []
    warm_engine(lambda name, done, total: seen.append((name, done, total)))
    total = len(_tiny_calls())
    assert [d for _, d, _ in seen] == list(range(total + 1))
    assert seen[-1][0] == "done"
