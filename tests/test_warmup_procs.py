"""The cold-cache warm-up in two child processes: the split, the child, fallback, no orphans."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from tutor import warmup, warmup_procs
from tutor.app import make_app
from tutor.warmup import APART, RIDES_WITH, SENTINELS, _tiny_calls, areas_of, plan_children
from tutor.warmup_procs import WarmUpChildren, prepare_engine

NAMES = [name for name, _ in _tiny_calls()]


def _python(code: str) -> Callable[[Sequence[str]], list[str]]:
    """A stand-in child: runs ``code`` with the areas as sys.argv[1:]; ``areas()`` yields
    them and then, after ``--queue``, those handed out on stdin (asking with ``ready``)."""
    preamble = ("import sys\n"
                "def areas():\n"
                "    queued = sys.argv[1:2] == ['--queue']\n"
                "    yield from sys.argv[1 + queued:]\n"
                "    while queued:\n"
                "        print('ready', flush=True)\n"
                "        line = sys.stdin.readline()\n"
                "        if not line: return\n"
                "        yield from line.rstrip('\\n').split('\\t')\n")
    return lambda names: [sys.executable, "-c", preamble + code, *names]


REPORTS_ALL = _python("for n in areas():\n"
                      "    print('start', n, flush=True); print('done', n, '0.5', flush=True)\n"
                      "print('finished 0.25', flush=True)")
FAILS = _python("print('done', next(areas()), '0.1', flush=True); sys.exit(1)")
HANGS = _python("import time\nit = areas(); print('done', next(it), '0.0', flush=True)\n"
                "print('start', next(it), flush=True); time.sleep(120)")


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_the_plan_gives_every_area_once_in_order(parts):
    firsts, queue = plan_children(NAMES, parts)
    assert len(firsts) == parts
    assert Counter(n for group in firsts + queue for n in group) == Counter(NAMES)
    for group in firsts + queue:
        assert group == [n for n in NAMES if n in group]


def test_the_plan_keeps_riders_with_their_host_and_the_halves_apart():
    assert set(RIDES_WITH) | set(RIDES_WITH.values()) <= set(NAMES)
    firsts, queue = plan_children(NAMES, 2)
    group_of = {n: k for k, group in enumerate(queue) for n in group}
    for rider, host in RIDES_WITH.items():
        assert group_of[rider] == group_of[host]
    # the halves of one feature start first, side by side, whatever the costs say
    for pair in APART:
        assert sorted(n for first in firsts for n in first if n in pair) == sorted(pair)
        assert all(len(set(first) & set(pair)) == 1 for first in firsts)
    # costliest first: the groups free children take are in falling order of cost
    costs = [sum(warmup.COLD_SECONDS.get(n, 0.0) for n in group) or 1.0 for group in queue]
    assert costs == sorted(costs, reverse=True)
    # without its host a rider is a group of its own
    lone = ["softmax", "seq2seq lab (forward)", "loss"]
    assert plan_children(lone, 2) == ([["seq2seq lab (forward)"], []], [["softmax"], ["loss"]])


def test_child_compiles_a_tiny_subset_and_reports_each_area(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run(warmup_procs.child_command(["pooling", "loss"]), capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.rsplit(" ", 1)[0] if line.startswith(("done", "finished")) else line
            for line in lines] == ["start pooling", "done pooling", "start loss", "done loss",
                                   "finished"]
    assert float(lines[-1].split()[1]) > 0  # its CPU seconds
    assert list(tmp_path.rglob("*.nbi"))  # the kernels went to the cache it was given


def test_a_queue_child_asks_for_more_until_its_input_ends(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run(warmup_procs.child_command(["--queue", "pooling"]),
                          input="loss\tsoftmax\nno such area\n", capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert [line.rsplit(" ", 1)[0] if line.startswith(("done", "finished")) else line
            for line in proc.stdout.splitlines()] == [
        "start pooling", "done pooling", "ready", "start loss", "done loss", "start softmax",
        "done softmax", "ready", "start no such area", "failed no such area", "ready",
        "finished"]


# sleeps as long as the number after "slow:" in an area's name, then reports it done
NAPS = _python("import time\nfor n in areas():\n"
               "    print('start', n, flush=True)\n"
               "    time.sleep(float(n.partition('slow:')[2] or 0))\n"
               "    print('done', n, '0.0', flush=True)\n"
               "print('finished 0.0', flush=True)")


def test_the_queue_goes_to_whichever_child_is_free():
    queue = [["a"], ["b", "c"], ["d"], ["e"]]
    kids = WarmUpChildren([["slow:1.5"], ["quick"]], NAPS, queue=queue)
    kids.start()
    assert kids.wait()
    assert {n: kids.owner[n] for n in "abcde"} == dict.fromkeys("abcde", 1)
    assert kids.owner["slow:1.5"] == 0 and kids.queue == []
    assert kids.through_at["e"] < kids.through_at["slow:1.5"]


def test_a_feature_waiting_for_a_queued_area_moves_it_to_the_front(tmp_path):
    kids = WarmUpChildren([["slow:0.5"]], NAPS, queue=[["a"], ["b"], ["wanted slow:0.2"]])
    kids.start()
    try:
        kids.wait_for("wanted slow:0.2")
        assert "wanted slow:0.2" in kids._through
    finally:
        assert kids.wait()
    at = kids.through_at
    assert at["slow:0.5"] < at["wanted slow:0.2"] < at["a"] < at["b"]  # it jumped the queue
    kids.wait_for("no such area")  # nobody has it or will: returns at once


def test_the_transformers_backward_half_in_a_child_compiles_no_forward_kernel(tmp_path):
    """In a warm-up child the area swaps the forward kernels out (nothing else runs there):
    on an empty cache it leaves the backward kernels cached and the forward ones not."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run(warmup_procs.child_command(["transformer lab (backward)"]),
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "done transformer lab (backward)" in proc.stdout, proc.stderr
    code = ("from tutor.warmup import module_is_cached, SENTINELS\n"
            "print(module_is_cached(SENTINELS['transformer lab (backward)']),\n"
            "      module_is_cached(SENTINELS['transformer lab']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.stdout.split() == ["True", "False"], out.stderr


def test_child_rejects_an_unknown_area_in_one_line():
    proc = subprocess.run(warmup_procs.child_command(["pooling", "no such area"]),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "unknown area(s) no such area" in proc.stderr
    assert "Traceback" not in proc.stderr


def _in_process(monkeypatch) -> list[bool]:
    """Record the in-process warm-up instead of running it (and load nothing behind the
    stand-in children: they compiled nothing)."""
    calls: list[bool] = []
    monkeypatch.setattr(warmup, "warm_engine", lambda report=None, should_stop=None: calls.append(True))
    monkeypatch.setattr(warmup_procs, "_load_behind", lambda children, should_stop: None)
    return calls


def test_areas_load_here_in_order_each_once_its_child_is_through(monkeypatch):
    order = ["slow:0.6", "quick", "a", "b", "c slow:0.3"]
    seen: list[tuple[str, bool]] = []
    kids = WarmUpChildren([["slow:0.6"], ["quick"]], NAPS, queue=[["c slow:0.3"], ["a", "b"]])

    def load(name: str) -> None:
        seen.append((name, name in kids._through))

    monkeypatch.setattr(warmup, "_tiny_calls", lambda: [(n, lambda n=n: load(n)) for n in order])
    kids.start()
    warmup_procs._load_behind(kids, None)
    assert kids.wait()
    assert seen == [(n, True) for n in order]
    assert kids.queue == [] and kids.owner["c slow:0.3"] == 1  # handed out first, not reordered


def test_children_that_finish_are_followed_by_the_in_process_load(monkeypatch):
    calls = _in_process(monkeypatch)
    seen: list[tuple[str, int, int]] = []
    prepare_engine(lambda *a: seen.append(a), cold=lambda: True, command=REPORTS_ALL)
    assert calls == [True]
    assert seen[0] == ("compiling on 2 cores", 0, len(NAMES))
    children = [(n, d) for n, d, _ in seen[1:]]
    assert sorted({d for _, d in children}) == list(range(len(NAMES) + 1))  # each area once
    assert all(n.startswith("compiling on 2 cores") for n, _ in children)
    shown = {area for n, _ in children for area in n.partition(": ")[2].split(" · ")}
    assert shown - {""} == set(NAMES)  # each area named while its child compiles it
    assert seen[-1][1] == len(NAMES)


def test_a_warm_cache_starts_no_child(monkeypatch):
    calls = _in_process(monkeypatch)
    started: list[object] = []
    prepare_engine(cold=lambda: False, on_children=started.append)
    assert calls == [True] and started == []


@pytest.mark.parametrize("command", [FAILS, _python("print('finished x', flush=True)"),
                                     lambda names: ["/no/such/python"]],
                         ids=["exit 1", "garbled line", "cannot start"])
def test_a_failed_child_falls_back_to_the_in_process_warm_up(monkeypatch, command):
    calls = _in_process(monkeypatch)
    children: list[WarmUpChildren] = []
    prepare_engine(cold=lambda: True, command=command, on_children=children.append)
    assert calls == [True]
    assert all(p.poll() is not None for p in children[0].procs)


def test_a_child_killed_from_outside_falls_back(monkeypatch):
    calls = _in_process(monkeypatch)
    children: list[WarmUpChildren] = []

    def kill_both_once_started(kids: WarmUpChildren) -> None:
        children.append(kids)

        def later() -> None:  # once both are busy with their second area
            while len(kids.procs) < 2 or not all(kids.current) or kids.done < 2:
                threading.Event().wait(0.01)
            kids.procs[0].kill()
            kids.procs[1].kill()

        threading.Thread(target=later, daemon=True).start()

    seen: list[tuple[str, int, int]] = []
    prepare_engine(lambda *a: seen.append(a), cold=lambda: True, command=HANGS,
                   on_children=kill_both_once_started)
    assert calls == [True]  # nobody asked to stop: the in-process warm-up compiles the rest
    # each stand-in was through one area and busy with its second when killed: the status
    # then names no area as being compiled
    assert seen[-1] == ("compiling on 2 cores", 2, len(NAMES))


def test_stopping_kills_the_children_and_skips_the_in_process_warm_up(monkeypatch):
    calls = _in_process(monkeypatch)
    children: list[WarmUpChildren] = []

    def stop_soon(kids: WarmUpChildren) -> None:
        children.append(kids)
        threading.Timer(0.5, kids.kill).start()

    prepare_engine(cold=lambda: True, command=HANGS, on_children=stop_soon)
    assert calls == []
    assert [p.poll() is not None for p in children[0].procs] == [True, True]


async def test_the_tui_shows_the_children_progress_and_leaves_no_orphan(monkeypatch):
    calls = _in_process(monkeypatch)
    monkeypatch.setattr(warmup, "cache_is_cold", lambda: True)
    monkeypatch.setattr(warmup_procs, "child_command", HANGS)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(300):
            kids = app._warm_children
            if kids is not None and " · " in app.engine_status and "(2/" in app.engine_status:
                break
            await pilot.pause(0.05)
        # each stand-in child is through its first area and compiling its second
        first, second = (part[1] for part in plan_children(NAMES, 2)[0])
        assert f"compiling on 2 cores: {first} · {second}" in app.engine_status or \
            f"compiling on 2 cores: {second} · {first}" in app.engine_status
        assert f"(2/{len(NAMES)} areas)" in app.engine_status
        procs = list(app._warm_children.procs)
        assert len(procs) == 2 and all(p.poll() is None for p in procs)
    for proc in procs:
        assert proc.poll() is not None
        with pytest.raises(ProcessLookupError):
            os.kill(proc.pid, 0)
    assert calls == []


def test_each_sentinel_module_is_cached_by_its_own_area():
    """In a fresh process per area (nothing else compiled), the area's call compiles (or loads)
    a kernel of its sentinel module, and the cold check then finds it on disk."""
    code = ("import sys, importlib\n"
            "from numba.core.dispatcher import Dispatcher\n"
            "from tutor.warmup import _tiny_calls, SENTINELS, module_is_cached\n"
            "name = sys.argv[1]; mod_name, _, kernel = SENTINELS[name].partition(':')\n"
            "mod = importlib.import_module(mod_name)\n"
            "def compiled(): return any(isinstance(o, Dispatcher) and o.signatures\n"
            "                           for k, o in vars(mod).items() if k == kernel or not kernel)\n"
            "dict(_tiny_calls())[name]()\n"
            "print(compiled(), module_is_cached(SENTINELS[name]))\n")
    for name in SENTINELS:
        proc = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["True", "True"], name


def test_an_empty_cache_is_cold_and_a_filled_module_is_cached(tmp_path):
    code = ("from tutor.warmup import cache_is_cold, module_is_cached, _tiny_calls\n"
            "print(cache_is_cold(), module_is_cached('engine.loss'))\n"
            "dict(_tiny_calls())['loss']()\n"
            "print(module_is_cached('engine.loss'))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False", "True"]


def test_each_lab_warm_up_belongs_to_a_warm_up_area():
    from tutor.lab.experiments import get

    halves = ("seq2seq lab (forward)", "seq2seq lab (backward)")
    assert areas_of(get("bottleneck").warm_up) == halves
    assert areas_of(get("alignment").warm_up) == halves
    assert areas_of(get("transformer").warm_up) == ("transformer lab", "transformer lab (backward)")
    assert areas_of(get("scaling").warm_up) == ()  # no kernels to wait for
    assert {a for areas in warmup.LOADER_AREAS.values() for a in areas} <= set(NAMES)


SLOW_FIRST = _python("import sys, time\nprint('start', sys.argv[1], flush=True); time.sleep(0.3)\n"
                     "print('done', sys.argv[1], '0.3', flush=True)\n"
                     "print('start', sys.argv[2], flush=True); time.sleep(120)")


def _started(command, parts) -> WarmUpChildren:
    kids = WarmUpChildren(parts, command)
    kids.start()
    return kids


def test_waiting_for_an_area_ends_when_its_child_is_through_it():
    kids = _started(SLOW_FIRST, [["pooling", "loss"], ["rnn", "softmax"]])
    try:
        kids.wait_for("rnn")
        assert "rnn" in kids._through
        assert [p.poll() for p in kids.procs] == [None, None]  # both still busy
        kids.wait_for("no such area")  # in no part: nothing to wait for
    finally:
        kids.kill()
    assert kids.wait() is False  # stopped


def test_waiting_ends_when_the_child_dies_or_the_caller_stops():
    kids = _started(FAILS, [["pooling", "loss"], ["rnn", "softmax"]])
    kids.wait_for("loss")  # its child exits 1 after "pooling"
    assert "loss" not in kids._through and kids.procs[0].poll() == 1
    kids.kill()
    kids = _started(HANGS, [["pooling", "loss"], ["rnn", "softmax"]])
    try:
        stop = threading.Event()
        threading.Timer(0.3, stop.set).start()
        kids.wait_for("loss", stop.is_set)
        assert stop.is_set() and "loss" not in kids._through
    finally:
        kids.kill()
    assert all(p.poll() is not None for p in kids.procs)


async def test_a_lab_run_on_a_first_run_waits_for_the_child_compiling_its_kernels(monkeypatch, tmp_path):
    """The lab's own kernel load starts only once the child has said it is through the
    seq2seq lab (here: once the test lets the stand-in say so)."""
    from dataclasses import replace

    import engine.lab
    from engine import lab
    from tutor.app import StartAt
    from tutor.screens.lab import LabScreen

    flag = tmp_path / "through"
    code = ("import os, sys, time\n"
            "for n in sys.argv[2:]:\n"
            "    print('start', n, flush=True)\n"
            "    while n.startswith('seq2seq lab') and not os.path.exists(sys.argv[1]): time.sleep(0.05)\n"
            "    print('done', n, '0.0', flush=True)\n"
            "print('finished 0.0', flush=True)\n")
    monkeypatch.setattr(warmup_procs, "child_command",
                        lambda names: [sys.executable, "-c", code, str(flag), *names])
    monkeypatch.setattr(warmup, "cache_is_cold", lambda: True)
    monkeypatch.setattr(warmup, "areas_are_cold", lambda areas: False)  # the lab's own check
    _in_process(monkeypatch)
    loads: list[bool] = []

    def load() -> None:  # stands for engine.lab.warm_up: records whether the child was through
        loads.append(flag.exists())

    load.__module__ = "engine.lab.training"
    monkeypatch.setattr(engine.lab, "warm_up", load)
    tiny = lab.TrainSettings(min_len=3, max_len=4, steps=5, batch_size=4)
    settings = {"alignment": replace(lab.AlignmentSettings(), train=tiny, hidden_dim=4, embed_dim=2,
                                     attn_dim=2, test_len=3)}
    app = make_app(StartAt("lab", "alignment", lab_settings=settings))
    async with app.run_test(size=(110, 34)) as pilot:
        for _ in range(300):
            if app._warm_children is not None and "seq2seq lab" in app.engine_status:
                break
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, LabScreen)
        await pilot.press("enter")
        await pilot.pause(1.0)
        assert loads == [] and screen.running == "alignment"  # waiting, not compiling
        flag.touch()
        for _ in range(600):
            if screen.running is None:
                break
            await pilot.pause(0.1)
        assert loads == [True]


class _Recorder:
    """Stand-ins for the warm-up calls and the experiment's load, logging what ran where."""

    def __init__(self, monkeypatch, interrupt: str = "") -> None:
        self.log: list[str] = []
        self.children: list[list[str]] = []

        def run(name: str) -> None:
            self.log.append(f"here {name}")
            if name == interrupt:
                raise KeyboardInterrupt

        calls = [(n, (lambda n=n: run(n))) for n in NAMES]
        monkeypatch.setattr(warmup, "_tiny_calls", lambda: calls)

        def load() -> None:
            self.log.append("load")

        load.__module__ = "engine.lab.training"  # the seq2seq lab's warm_up: two halves
        self.load = load

    def command(self, child: Callable[[Sequence[str]], list[str]]):
        def make(names: Sequence[str]) -> list[str]:
            self.children.append(list(names))
            return child(names)
        return make


def test_a_cold_lab_load_compiles_its_second_half_in_a_child(monkeypatch):
    rec = _Recorder(monkeypatch)
    assert warmup_procs.load_split(rec.load, cold=lambda areas: True, command=rec.command(REPORTS_ALL))
    assert rec.children == [["seq2seq lab (backward)"]]
    assert rec.log == ["here seq2seq lab (forward)", "load"]  # then everything loads here


def test_a_warm_or_single_area_load_runs_here_alone(monkeypatch):
    rec = _Recorder(monkeypatch)
    assert not warmup_procs.load_split(rec.load, cold=lambda areas: False,
                                       command=rec.command(REPORTS_ALL))
    assert rec.children == [] and rec.log == ["load"]
    other = lambda: rec.log.append("other")  # noqa: E731 - a loader of no known area
    assert not warmup_procs.load_split(other, cold=lambda areas: True, command=rec.command(REPORTS_ALL))
    assert rec.children == [] and rec.log == ["load", "other"]


def test_a_child_that_cannot_start_or_fails_leaves_the_work_here(monkeypatch):
    rec = _Recorder(monkeypatch)
    missing = lambda names: ["/nonexistent/python", *names]  # noqa: E731
    assert not warmup_procs.load_split(rec.load, cold=lambda areas: True, command=missing)
    assert rec.log == ["load"]  # load() compiles it all
    rec.log.clear()
    assert warmup_procs.load_split(rec.load, cold=lambda areas: True, command=FAILS)
    assert rec.log == ["here seq2seq lab (forward)", "load"]


SLEEPER = _python("import sys, time; print('start', sys.argv[1], flush=True); time.sleep(120)")


def _keep_children(monkeypatch) -> list[WarmUpChildren]:
    """The WarmUpChildren that load_split makes, kept for a look afterwards."""
    started: list[WarmUpChildren] = []
    real = warmup_procs.WarmUpChildren

    def keep(*args, **kwargs) -> WarmUpChildren:
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(warmup_procs, "WarmUpChildren", keep)
    return started


def test_a_stop_during_a_split_load_skips_the_wait_and_the_load(monkeypatch):
    """The first Ctrl-C of the CLI (or ``c`` in the TUI) while this process compiles its half:
    the child is killed at once and nothing else is waited for or loaded."""
    rec = _Recorder(monkeypatch)
    started = _keep_children(monkeypatch)
    stop = threading.Event()
    monkeypatch.setattr(rec, "log", _LogThenStop(stop))
    assert warmup_procs.load_split(rec.load, cold=lambda areas: True, command=SLEEPER,
                                   should_stop=stop.is_set)
    assert list(rec.log) == ["here seq2seq lab (forward)"]  # not loaded after the stop
    (kids,) = started
    assert kids.procs[0].poll() is not None  # killed, not waited for


class _LogThenStop(list):
    """A log that sets ``stop`` when the first line is written (a Ctrl-C during that area)."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop

    def append(self, line: str) -> None:
        super().append(line)
        self.stop.set()


def test_ctrl_c_during_a_split_load_kills_the_child(monkeypatch):
    rec = _Recorder(monkeypatch, interrupt="seq2seq lab (forward)")
    started = _keep_children(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        warmup_procs.load_split(rec.load, cold=lambda areas: True, command=SLEEPER)
    assert rec.log == ["here seq2seq lab (forward)"]  # interrupted: nothing loaded
    (kids,) = started
    assert len(kids.procs) == 1 and kids.procs[0].poll() is not None  # killed, not orphaned


def test_without_the_jit_nothing_counts_as_cold(tmp_path):
    """NUMBA_DISABLE_JIT=1: no kernel to look at, so no child compiles on every start."""
    code = ("from tutor.warmup import cache_is_cold, module_is_cached\n"
            "print(cache_is_cold(), module_is_cached('engine.flash'))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "None"]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody has reaped yet counts as gone)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_a_child_whose_parent_was_killed_exits_by_itself():
    """The parent dies without a word (kill -9 of the TUI): the child's watch thread sees its
    parent change and ends it, instead of compiling on for a window that is gone."""
    grandchild = ("import os, threading, time\n"
                  "from tutor.warmup_procs import _exit_with_parent\n"
                  "threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()\n"
                  "print(os.getpid(), flush=True)\n"
                  "time.sleep(120)\n")
    parent = ("import os, subprocess, sys\n"
              f"p = subprocess.Popen([sys.executable, '-c', {grandchild!r}], stdout=subprocess.PIPE,\n"
              "                     stderr=subprocess.DEVNULL, text=True)\n"
              "print(p.stdout.readline().strip(), flush=True)\n"
              "os._exit(0)\n")
    proc = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    pid = int(proc.stdout.split()[0])
    for _ in range(300):  # it checks every 0.5 s; it would otherwise sleep for two minutes
        if not _alive(pid):
            break
        threading.Event().wait(0.1)
    assert not _alive(pid)


def test_the_riders_compile_nothing_worked_examples_did_not():
    """In a fresh process: after the worked-examples areas, each area of RIDES_WITH adds no
    compiled signature to any engine kernel (so it costs nothing in its host's child)."""
    code = ("import sys\n"
            "from numba.core.dispatcher import Dispatcher\n"
            "from tutor.warmup import RIDES_WITH, _tiny_calls\n"
            "def compiled():\n"
            "    return {(m, a, s) for m, mod in list(sys.modules.items()) if m.startswith('engine') and mod\n"
            "            for a, o in vars(mod).items() if isinstance(o, Dispatcher) for s in o.signatures}\n"
            "calls = dict(_tiny_calls())\n"
            "for host in sorted(set(RIDES_WITH.values())): calls[host]()\n"
            "for rider in RIDES_WITH:\n"
            "    before = compiled(); calls[rider](); print(rider, '|', sorted(compiled() - before))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    added = dict(line.split(" | ") for line in proc.stdout.splitlines())
    assert set(added) == set(RIDES_WITH)
    assert all(new == "[]" for new in added.values()), added


def test_the_tuis_children_compile_at_a_lower_priority():
    """The screen and a lab run the student started go first: a child lowers its own
    priority by what the variable says (the TUI's prepare_engine asks for BACKGROUND_NICE)."""
    code = ("import os\nfrom tutor import warmup_procs\nwarmup_procs.main(['pooling'])\n"
            "print('nice', os.nice(0))\n")
    env = dict(os.environ, **{warmup_procs.NICE_VARIABLE: "7"})
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == f"nice {min(19, os.nice(0) + 7)}"
    # WarmUpChildren hands its children the variable (a stand-in reports it as its CPU time)
    says = _python(f"import os; print('finished', os.environ['{warmup_procs.NICE_VARIABLE}'], flush=True)")
    kids = WarmUpChildren([["pooling"]], says, nice=warmup_procs.BACKGROUND_NICE)
    kids.start()
    kids.wait()
    assert kids.cpu_seconds == [float(warmup_procs.BACKGROUND_NICE)] and warmup_procs.BACKGROUND_NICE > 0


def test_the_worked_examples_areas_build_every_trace_exactly_once(monkeypatch):
    from engine.traces import list_traces
    from tutor.heatmap import sources

    built: list[str] = []
    monkeypatch.setattr(sources, "build_heatmaps",
                        lambda wanted: built.extend(i.name for i in list_traces() if wanted(i.name)))
    areas = [n for n in NAMES if n.startswith("worked examples")]
    assert areas[0] == "worked examples" and set(areas[1:]) == set(warmup.TRACE_AREAS)
    for area in areas:
        dict(_tiny_calls())[area]()
    assert Counter(built) == Counter(i.name for i in list_traces())
