"""A cold numba cache compiled on two cores: two child processes, each one half of the warm-up.

numba compiles a kernel on one core and holds the GIL for much of it, so a first run that
compiles every kernel in the TUI's own worker thread takes the sum of all compile times and
slows the UI while it does. When :func:`tutor.warmup.cache_is_cold`, :func:`prepare_engine`
starts ``python -m tutor.warmup_procs NAME…`` twice (same interpreter and environment, so
the same ``NUMBA_CACHE_DIR``) on the two halves of :func:`tutor.warmup.split_calls`; each
child prints one line per area and exits, and the kernels they cached then load in-process
in well under a second. A child that fails or is killed means the in-process warm-up
compiles what is left; quitting kills the children (and a child whose parent is gone stops
by itself).

Child protocol, one line per event on stdout: ``start NAME``, ``done NAME SECONDS`` (or
``failed NAME``), then ``finished CPU_SECONDS`` (the child's CPU time) before a zero exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # holds tutor/ and engine/

Report = Callable[[str, int, int], None]
NICE_VARIABLE = "ATTN_TUTOR_WARMUP_NICE"  # tells a child how much to lower its own priority
BACKGROUND_NICE = 10


def child_command(names: Sequence[str]) -> list[str]:
    """The command line of one child compiling the areas ``names``."""
    return [sys.executable, "-m", "tutor.warmup_procs", *names]


class WarmUpChildren:
    """Child processes compiling parts of the warm-up; the lines they print are counted.

    Args:
        parts: the areas of each child.
        command: a child's command line from its areas (tests swap in a stand-in).
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
                 nice: int = 0) -> None:
        self.parts = [list(p) for p in parts]
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
        self._through: set[str] = set()  # areas a child is through (done or failed)
        self._lock = threading.Lock()
        self._readers: list[threading.Thread] = []

    def start(self) -> None:
        """Start one child per part; raises OSError when one cannot start (the others are killed)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[NICE_VARIABLE] = str(self.nice)
        try:
            for part in self.parts:
                with self._lock:
                    if self.stopped:
                        return
                    proc = subprocess.Popen(self.command(part), stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            text=True, env=env)
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
                elif word == "start":
                    self._now(i, rest)
                elif word in ("done", "failed"):
                    self._now(i, "", rest.rsplit(" ", 1)[0] if word == "done" else rest)
        except (ValueError, OSError):  # a garbled line or a closed pipe: wait() reports failure
            with self._lock:
                self.finished = -len(self.parts)
        if self.current[i]:  # killed mid-area: it compiles nothing now
            self._now(i, "")

    def _now(self, i: int, area: str, through: str = "") -> None:
        """Child ``i`` compiles ``area`` now ("": none), and is through the area ``through``."""
        with self._lock:
            self.current[i] = area
            if through:
                self.done += 1
                self._through.add(through)
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
        return not self.stopped and self.finished == len(self.parts) and all(c == 0 for c in codes)

    def wait_for(self, area: str, should_stop: Callable[[], bool] | None = None) -> None:
        """Block until a child is through ``area`` (its kernels are in the cache), the child
        that has it is gone, the children were stopped, or ``should_stop()``: a feature that
        needs ``area`` loads it then instead of compiling it a second time meanwhile."""
        import time

        owner = next((i for i, part in enumerate(self.parts) if area in part), None)
        while owner is not None and not (should_stop and should_stop()):
            with self._lock:
                if area in self._through or self.stopped or self.broken:
                    return
                if owner < len(self.procs) and self.procs[owner].poll() is not None:
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
    import time

    from tutor.warmup import _tiny_calls, cache_is_cold, split_calls, warm_engine

    t0 = time.perf_counter()
    if (cold or cache_is_cold)() and not (should_stop and should_stop()):
        names = [name for name, _ in _tiny_calls()]

        def changed(now: list[str], done: int) -> None:
            if report:
                busy = " · ".join(n for n in now if n)
                report(f"compiling on {parts} cores" + (f": {busy}" if busy else ""), done,
                       len(names))

        children = WarmUpChildren(split_calls(names, parts), command or child_command, changed,
                                  nice=BACKGROUND_NICE)
        if on_children is not None:
            on_children(children)
        if should_stop and should_stop():  # quit meanwhile: the caller may not have seen them
            children.kill()
            return time.perf_counter() - t0
        if report:
            report(f"compiling on {parts} cores", 0, len(names))
        try:
            children.start()
            children.wait()  # a failed child: the in-process warm-up compiles the rest
        except OSError:
            pass
        if children.stopped:
            return time.perf_counter() - t0
    warm_engine(report, should_stop=should_stop)
    return time.perf_counter() - t0


def load_split(load: Callable[[], object], *, cold: Callable[[Sequence[str]], bool] | None = None,
               command: Callable[[Sequence[str]], list[str]] | None = None) -> bool:
    """Run an experiment's kernel ``load`` (its ``warm_up``, e.g. before the CLI lab's
    progress bars). On a cold cache, when ``load`` has more than one warm-up area
    (:func:`tutor.warmup.areas_of`), a child process compiles the areas after the first
    while this one compiles the first, so the wait is the longer half rather than the sum;
    ``load()`` then loads it all from the cache (or compiles what a failed child left).
    Returns whether a child ran. ``cold`` and ``command`` replace the cache check and
    :func:`child_command` (tests). An exception or Ctrl-C here kills the child."""
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
            children.wait()
        load()
    finally:
        if children is not None:
            children.kill()  # nothing to do once it has exited
    return children is not None


def _exit_with_parent(parent: int) -> None:
    """Poll the parent's pid; leave at once when it is gone (killed TUI: no orphan compiles)."""
    import time

    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def main(names: Sequence[str]) -> int:
    """The child: run the warm-up areas ``names`` in order, printing the protocol lines."""
    import time

    from tutor.warmup import _tiny_calls

    watch = threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True)
    watch.start()
    try:
        nice = int(os.environ.get(NICE_VARIABLE) or 0)
        if nice > 0:
            os.nice(nice)
    except (ValueError, OSError, AttributeError):  # a bad value, or no os.nice (Windows)
        pass
    calls = dict(_tiny_calls())
    unknown = [n for n in names if n not in calls]
    if unknown:
        print(f"attn-tutor warm-up: unknown area(s) {', '.join(unknown)}; expected some of: "
              f"{', '.join(calls)}", file=sys.stderr)
        return 2
    for name in names:
        print(f"start {name}", flush=True)
        t0 = time.perf_counter()
        try:
            calls[name]()
        except Exception:  # noqa: BLE001 - as in warm_engine: skip an area, never stop
            print(f"failed {name}", flush=True)
            continue
        print(f"done {name} {time.perf_counter() - t0:.2f}", flush=True)
    print(f"finished {time.process_time():.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
