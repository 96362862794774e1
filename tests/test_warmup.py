"""The warm-up: every area's call reaches a real engine function, and one background thread
loads them in an order the student's requests change."""

from __future__ import annotations

import threading

import pytest

from tutor.lab.experiments import EXPERIMENTS
from tutor.warmup import TRACE, WarmUp, areas


@pytest.mark.parametrize(("name", "call"), list(areas().items()), ids=list(areas()))
def test_each_warm_up_call_runs(name, call):
    call()


def test_every_trace_and_every_experiments_kernels_are_an_area():
    from engine.traces import list_traces

    names = areas()
    assert {TRACE + t.name for t in list_traces()} <= set(names)
    assert next(iter(names)) == TRACE + "qkv"            # the trace screen's first trace
    for exp in EXPERIMENTS:
        assert set(exp.kernels) | set(exp.later) <= set(names), exp.name
    # the Transformer's scoring is loaded while it trains, not before its bars
    assert [(e.kernels, e.later) for e in EXPERIMENTS if e.name == "transformer"] == [
        (("transformer lab",), ("transformer scoring",))]


def test_the_warm_up_reports_every_area_in_order_then_done():
    seen: list[tuple[str, int, int]] = []
    ran: list[str] = []
    calls = {n: (lambda n=n: ran.append(n)) for n in ("a", "b", "c")}
    w = WarmUp(calls, lambda name, done, total: seen.append((name, done, total)))
    w.start()
    w.wait_for(["c"])
    w._thread.join(10)
    assert ran == ["a", "b", "c"] or ran[0] == "c"
    assert seen[-1] == ("done", 3, 3) and [d for _, d, _ in seen] == [0, 1, 2, 3]
    assert w.finished and w.seconds is not None


def _busy_in_first_area(later: str) -> tuple[WarmUp, threading.Event, list[str]]:
    """A started warm-up whose thread is inside its area "first" until the returned gate is
    set, then runs the areas named by the letters of ``later``; ``ran`` records the order."""
    gate, started = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow() -> None:
        started.set()
        gate.wait(10)
        ran.append("first")

    w = WarmUp({"first": slow, **{n: (lambda n=n: ran.append(n)) for n in later}})
    w.start()
    assert started.wait(30)          # the thread is in the first area (numba imported)
    return w, gate, ran


def test_an_area_asked_for_jumps_the_queue_and_the_caller_waits_for_it():
    w, gate, ran = _busy_in_first_area("bcd")
    waiter = threading.Thread(target=w.wait_for, args=(["d"],))
    waiter.start()
    w.prefer("d")                    # (wait_for did too; twice is harmless)
    gate.set()                       # the area in hand finishes first
    waiter.join(10)
    assert not waiter.is_alive() and "d" in ran
    w._thread.join(10)
    assert ran == ["first", "d", "b", "c"]


def test_areas_wanted_later_are_queued_right_after_the_ones_waited_for():
    w, gate, ran = _busy_in_first_area("bcde")
    waiter = threading.Thread(target=w.wait_for, args=(["d"],), kwargs={"then": ["e"]})
    waiter.start()
    while w._queue[:1] != ["d"]:     # wait_for has reordered the queue
        waiter.join(0.01)
    gate.set()
    waiter.join(10)
    w._thread.join(10)
    assert ran == ["first", "d", "e", "b", "c"]


def test_load_in_background_loads_only_the_areas_named(monkeypatch):
    import tutor.warmup as warmup

    ran: list[str] = []
    monkeypatch.setattr(warmup, "areas", lambda: {n: (lambda n=n: ran.append(n)) for n in "xyz"})
    w = warmup.load_in_background(["z", "x"])
    w._thread.join(10)
    assert ran == ["z", "x"] and w.finished


def test_a_failing_area_does_not_stop_the_warm_up_and_stop_ends_it():
    def broken() -> None:
        raise RuntimeError("a bug the feature will report itself")

    ran: list[str] = []
    w = WarmUp({"broken": broken, "ok": lambda: ran.append("ok")})
    w.start()
    w.wait_for(["ok"])
    assert ran == ["ok"]
    w.stop()
    w._thread.join(10)
    assert w.finished
