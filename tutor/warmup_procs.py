"""A cold numba cache compiled on two cores: two child processes sharing the warm-up.

numba compiles a kernel on one core and holds the GIL for much of it, so a first run that
compiles every kernel in the TUI's own worker thread takes the sum of all compile times and
slows the UI while it does. When :func:`tutor.warmup.cache_is_cold`, :func:`prepare_engine`
starts ``python -m tutor.warmup_procs --queue NAME…`` twice (same interpreter and
environment, so the same ``NUMBA_CACHE_DIR``): each child compiles its own first areas (the
halves of the seq2seq lab, one each), then asks for more, and the parent hands the groups of
:func:`tutor.warmup.plan_children`'s queue to whichever child is free, so neither waits for a
split that was balanced on another CPU. The kernels they cached then load in-process in well
under a second. A child that fails or is killed means the in-process warm-up compiles what is
left; quitting kills the children (and a child whose parent is gone stops by itself).

Child protocol, one line per event on stdout: ``start NAME``, ``done NAME SECONDS`` (or
``failed NAME``); with ``--queue``, ``ready`` when through its list, answered on stdin by one
line of tab-separated areas to compile next, or by end of input; then ``finished
CPU_SECONDS`` (the child's CPU time) before a zero exit.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, KeysView, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # holds tutor/ and engine/

Report = Callable[[str, int, int], None]
NICE_VARIABLE = "ATTN_TUTOR_WARMUP_NICE"  # tells a child how much to lower its own priority
BACKGROUND_NICE = 10


QUEUE_FLAG = "--queue"  # the child's first argument: ask for more areas when through its list


def child_command(names: Sequence[str]) -> list[str]:
    """The command line of one child compiling the areas ``names`` (``--queue`` first: and
    then the ones it is handed)."""
    return [sys.executable, "-m", "tutor.warmup_procs", *names]


class WarmUpChildren:
    """Child processes compiling parts of the warm-up; the lines they print are counted.

    Args:
        parts: the areas of each child, compiled first.
        command: a child's command line from its areas (tests swap in a stand-in).
        queue: groups of areas handed, in order, to whichever child says it is ready (each
            child's command then starts with ``--queue``); None: each child compiles only
            its part.
        on_change: called (from a reader thread) when a child starts or ends an area, with
            the areas each child is compiling now ("" once it is through) and how many
            areas are through in all.
        nice: how much lower the children's CPU priority is (``os.nice``): the TUI's
            children compile in the background, and the screen and a lab run the student
            started go first on a busy machine.
    """

    def __init__(self, parts: Sequence[Sequence[str]],
                 command: Callable[[Sequence[str]], list[str]] | None = None,
                 on_change: Callable[[list[str], int], None] | None = None,
                 nice: int = 0, queue: Sequence[Sequence[str]] | None = None) -> None:
        self.parts = [list(p) for p in parts]
        self.queue = None if queue is None else [list(g) for g in queue]  # groups not handed out
        self.owner = {n: i for i, part in enumerate(self.parts) for n in part}  # area → child
        self.nice = nice
        self.command = command or child_command
        self.on_change = on_change
        self.current = [""] * len(self.parts)  # the area each child is compiling
        self.done = 0  # areas through, in all children
        self.procs: list[subprocess.Popen] = []
        self.finished = 0  # children that printed "finished"
        self.cpu_seconds: list[float] = []  # each finished child's CPU time, as it reports it
        self.stopped = False
        self.broken = False  # a child could not start
        self.through_at: dict[str, float] = {}  # area → seconds from start() to done/failed
        self._t0 = 0.0
        self._lock = threading.Lock()
        self._readers: list[threading.Thread] = []

    def start(self) -> None:
        """Start one child per part; raises OSError when one cannot start (the others are killed)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[NICE_VARIABLE] = str(self.nice)
        self._t0 = time.perf_counter()
        try:
            for part in self.parts:
                with self._lock:
                    if self.stopped:
                        return
                    queued = self.queue is not None
                    proc = subprocess.Popen(
                        self.command([QUEUE_FLAG, *part] if queued else part),
                        stdin=subprocess.PIPE if queued else subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
                    self.procs.append(proc)
                reader = threading.Thread(target=self._read, args=(proc, len(self.procs) - 1),
                                          daemon=True)
                reader.start()
                self._readers.append(reader)
        except OSError:
            self.broken = True
            self._end_all()
            raise

    def _read(self, proc: subprocess.Popen, i: int) -> None:
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                word, _, rest = line.strip().partition(" ")
                if word == "finished":
                    with self._lock:
                        self.finished += 1
                        self.cpu_seconds.append(float(rest or 0))
                elif word == "ready":
                    self._hand_out(i, proc)
                elif word == "start":
                    self._now(i, rest)
                elif word in ("done", "failed"):
                    self._now(i, "", rest.rsplit(" ", 1)[0] if word == "done" else rest)
        except (ValueError, OSError):  # a garbled line or a closed pipe: wait() reports failure
            with self._lock:
                self.finished = -len(self.parts)
        if self.current[i]:  # killed mid-area: it compiles nothing now
            self._now(i, "")

    @property
    def _through(self) -> KeysView[str]:
        """The areas a child is through (done or failed)."""
        return self.through_at.keys()

    def _hand_out(self, i: int, proc: subprocess.Popen) -> None:
        """Child ``i`` is ready for more: send it the next group of the queue, or end its input."""
        if proc.stdin is None:  # not a queue child
            return
        with self._lock:
            group = self.queue.pop(0) if self.queue and not self.stopped else None
            if group is not None:
                self.owner.update((n, i) for n in group)
        try:
            if group is None:
                proc.stdin.close()
            else:
                proc.stdin.write("\t".join(group) + "\n")
                proc.stdin.flush()
        except (OSError, ValueError):  # the child is gone: wait() reports it, the rest stays
            if group is not None:
                with self._lock:
                    self.queue.insert(0, group)
                    for n in group:
                        self.owner.pop(n, None)

    def prefer(self, area: str) -> None:
        """Move the queued group holding ``area`` to the front: a feature waits for it."""
        with self._lock:
            for k, group in enumerate(self.queue or []):
                if area in group:
                    self.queue.insert(0, self.queue.pop(k))
                    return

    def _now(self, i: int, area: str, through: str = "") -> None:
        """Child ``i`` compiles ``area`` now ("": none), and is through the area ``through``."""
        with self._lock:
            self.current[i] = area
            if through:
                self.done += 1
                self.through_at[through] = time.perf_counter() - self._t0
            now, done = list(self.current), self.done
        if self.on_change is not None:
            try:
                self.on_change(now, done)
            except Exception:  # noqa: BLE001 - progress is shown, never fatal
                pass

    def wait(self) -> bool:
        """Wait for every child; True when each one ran its whole list and exited 0."""
        codes = [proc.wait() for proc in self.procs]
        for reader in self._readers:
            reader.join()
        return (not self.stopped and self.finished == len(self.parts) and not self.queue
                and all(c == 0 for c in codes))

    def wait_for(self, area: str, should_stop: Callable[[], bool] | None = None,
                 prefer: bool = True) -> None:
        """Block until a child is through ``area`` (its kernels are in the cache), the child
        that has it is gone, the children were stopped, or ``should_stop()``: a feature that
        needs ``area`` loads it then instead of compiling it a second time meanwhile. A queued
        ``area`` goes to the front of the queue (unless not ``prefer``); while no child has it,
        waiting ends when every child has exited."""
        if prefer:
            self.prefer(area)
        with self._lock:
            if area not in self.owner and not any(area in g for g in self.queue or []):
                return  # no child has it, nor will
        while not (should_stop and should_stop()):
            with self._lock:
                if area in self._through or self.stopped or self.broken:
                    return
                owner = self.owner.get(area)
                if owner is None:  # still queued: wait while some child may take it
                    if self.procs and all(p.poll() is not None for p in self.procs):
                        return
                elif owner < len(self.procs) and self.procs[owner].poll() is not None:
                    return
            time.sleep(0.1)

    def kill(self) -> None:
        """Stop every child now (the app is quitting); safe to call twice or before start."""
        with self._lock:
            self.stopped = True
        self._end_all()

    def _end_all(self) -> None:
        with self._lock:
            procs = list(self.procs)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL not delivered
                pass


def prepare_engine(report: Report | None = None, *, cold: Callable[[], bool] | None = None,
                   parts: int = 2, on_children: Callable[[WarmUpChildren], None] | None = None,
                   command: Callable[[Sequence[str]], list[str]] | None = None,
                   should_stop: Callable[[], bool] | None = None) -> float:
    """Warm every engine area: on a cold cache in ``parts`` child processes first, then (always)
    in this process; returns the seconds it took.

    ``report(name, done, total)`` as in :func:`tutor.warmup.warm_engine`; while the children
    compile, ``name`` is ``"compiling on 2 cores: A · B"`` (what each compiles now) and ``done``
    counts the areas through in both. ``on_children`` receives
    the children before they start, so the caller can kill them when it quits; ``command``
    replaces :func:`child_command` (tests); ``should_stop()`` true: stop as soon as possible.
    """
    from tutor.warmup import _tiny_calls, cache_is_cold, plan_children, warm_engine

    t0 = time.perf_counter()
    if (cold or cache_is_cold)() and not (should_stop and should_stop()):
        names = [name for name, _ in _tiny_calls()]

        def changed(now: list[str], done: int) -> None:
            if report:
                busy = " · ".join(n for n in now if n)
                report(f"compiling on {parts} cores" + (f": {busy}" if busy else ""), done,
                       len(names))

        firsts, queue = plan_children(names, parts)
        children = WarmUpChildren(firsts, command or child_command, changed,
                                  nice=BACKGROUND_NICE, queue=queue)
        if on_children is not None:
            on_children(children)
        if should_stop and should_stop():  # quit meanwhile: the caller may not have seen them
            children.kill()
            return time.perf_counter() - t0
        if report:
            report(f"compiling on {parts} cores", 0, len(names))
        try:
            children.start()
            _load_behind(children, should_stop)
            children.wait()  # a failed child: the in-process warm-up compiles the rest
        except OSError:
            pass
        if children.stopped:
            return time.perf_counter() - t0
    warm_engine(report, should_stop=should_stop)
    return time.perf_counter() - t0


def _load_behind(children: WarmUpChildren, should_stop: Callable[[], bool] | None) -> None:
    """While the children compile, load here each area a child is through, in warm-up order
    (every area before it is in by then), so that little is left to load once they finish: a
    core one child has left idle does this work. An area whose child died compiles here."""
    from tutor import warmup

    warmup.warm_engine(
        should_stop=lambda: children.stopped or bool(should_stop and should_stop()),
        before=lambda name: children.wait_for(name, should_stop, prefer=False))  # queue order kept


def load_split(load: Callable[[], object], *, cold: Callable[[Sequence[str]], bool] | None = None,
               command: Callable[[Sequence[str]], list[str]] | None = None,
               should_stop: Callable[[], bool] | None = None) -> bool:
    """Run an experiment's kernel ``load`` (its ``warm_up``, e.g. before the CLI lab's
    progress bars). On a cold cache, when ``load`` has more than one warm-up area
    (:func:`tutor.warmup.areas_of`), a child process compiles the areas after the first
    while this one compiles the first, so the wait is the longer half rather than the sum;
    ``load()`` then loads it all from the cache (or compiles what a failed child left).
    Returns whether a child ran. ``cold`` and ``command`` replace the cache check and
    :func:`child_command` (tests). An exception or Ctrl-C here kills the child; so does
    ``should_stop()`` turning true while this process compiles its half, which then returns
    without waiting for the child or loading the rest (the run that wanted them is stopping;
    the kernels compiled so far stay in the cache)."""
    from tutor.warmup import _tiny_calls, areas_are_cold, areas_of

    areas = areas_of(load)
    children = None
    if len(areas) > 1 and (cold or areas_are_cold)(areas):
        children = WarmUpChildren([list(areas[1:])], command or child_command)
        try:
            children.start()
        except OSError:  # cannot start a process: compile it all here
            children = None
    try:
        if children is not None:
            dict(_tiny_calls())[areas[0]]()
            if should_stop is not None and should_stop():
                return True
            children.wait()
        load()
    finally:
        if children is not None:
            children.kill()  # nothing to do once it has exited
    return children is not None


def _exit_with_parent(parent: int) -> None:
    """Poll the parent's pid; leave at once when it is gone (killed TUI: no orphan compiles)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def _handed_out() -> Iterator[str]:
    """The areas the parent sends on stdin, one group a line, each asked for by ``ready``."""
    while True:
        print("ready", flush=True)
        line = sys.stdin.readline()
        if not line:  # end of input: nothing left
            return
        yield from filter(None, line.rstrip("\n").split("\t"))


def main(args: Sequence[str]) -> int:
    """The child: run the warm-up areas in ``args`` in order (after ``--queue``: then the ones
    handed out on stdin), printing the protocol lines."""
    from tutor import warmup

    warmup.ISOLATED = True  # nothing but warm-up areas run here
    watch = threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True)
    watch.start()
    try:
        nice = int(os.environ.get(NICE_VARIABLE) or 0)
        if nice > 0:
            os.nice(nice)
    except (ValueError, OSError, AttributeError):  # a bad value, or no os.nice (Windows)
        pass
    queued = bool(args) and args[0] == QUEUE_FLAG
    names = list(args[1:] if queued else args)
    calls = dict(warmup._tiny_calls())
    unknown = [n for n in names if n not in calls]
    if unknown:
        print(f"attn-tutor warm-up: unknown area(s) {', '.join(unknown)}; expected some of: "
              f"{', '.join(calls)}", file=sys.stderr)
        return 2
    for name in itertools.chain(names, _handed_out() if queued else ()):
        print(f"start {name}", flush=True)
        t0 = time.perf_counter()
        try:
            calls[name]()
        except Exception:  # noqa: BLE001 - as in warm_engine (an unknown area too): skip it
            print(f"failed {name}", flush=True)
            continue
        print(f"done {name} {time.perf_counter() - t0:.2f}", flush=True)
    print(f"finished {time.process_time():.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
