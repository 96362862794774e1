"""Run the CLI in this process as a user would, and say whether it behaved.

:func:`invoke` calls :func:`tutor.cli.main` (the console script's entry point, so the same
error handling as a real ``attn-tutor``) with its own stdin, stdout and stderr, an
environment override and a time limit. :func:`problems` lists what is wrong with a run, by
the rules of issue 14: no traceback and no escaped exception, no hang, an exit status that is
0 (done), 1 (the progress file or the machine could not do it), 2 (a user mistake) or 130
(interrupted); a failing run ends with one ``attn-tutor: error:`` line, and no line of
stderr is longer than :data:`MAX_LINE` (error lines echo only a short prefix of the input).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_LINE = 400
"""Longest stderr line a run may print: a message plus a short prefix of what was typed."""

OK_CODES = (0, 1, 2, 130)


class Hang(Exception):
    """The run took longer than its time limit."""


@dataclass
class Run:
    """What one invocation did."""

    args: list[str]
    code: int | None
    out: str
    err: str
    crash: str | None = None
    """The traceback of an exception that escaped ``main`` (None when it exited properly)."""
    seconds: float = 0.0

    def __str__(self) -> str:
        shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in self.args)
        return (f"attn-tutor {shown} -> exit {self.code} in {self.seconds:.1f} s\n"
                f"stderr: {self.err[-800:]!r}\ncrash: {(self.crash or '')[-1500:]}")


def invoke(args: Sequence[str], stdin: str = "", env: Mapping[str, str | None] | None = None,
           timeout: float = 10.0) -> Run:
    """``attn-tutor *args`` in this process; ``env`` values of None unset a variable."""
    out, err = io.StringIO(), io.StringIO()
    saved_env = {k: os.environ.get(k) for k in (env or {})}
    for k, v in (env or {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)

    def on_alarm(signum, frame):
        raise Hang(f"no answer after {timeout} s")

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    code, crash = None, None
    start = time.perf_counter()
    try:
        from tutor.cli import main

        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - an escaped exception is what we are looking for
        crash = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        sys.stdin = old_stdin
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Run(list(args), code, out.getvalue(), err.getvalue(), crash,
               time.perf_counter() - start)


def problems(run: Run) -> list[str]:
    """Everything about ``run`` that breaks the rules in the module docstring (empty: fine)."""
    found = []
    if run.crash is not None:
        last = run.crash.strip().splitlines()[-1]
        found.append(("hang: " if "Hang" in last else "escaped exception: ") + last)
        return found
    if run.code not in OK_CODES:
        found.append(f"exit status {run.code}")
    if "Traceback (most recent call last)" in run.out + run.err:
        found.append("printed a traceback")
    lines = run.err.strip().splitlines()
    if run.code not in (0, 130) and (not lines or not lines[-1].startswith("attn-tutor: error:")):
        found.append(f"exit {run.code} without an 'attn-tutor: error:' line")
    if lines and run.code not in (0, 130) and lines[-1].startswith("attn-tutor: error:"):
        errors = [line for line in lines if line.startswith("attn-tutor: error:")]
        if len(errors) > 1:
            found.append("more than one error line")
    long = [line for line in lines if len(line) > MAX_LINE]
    if long:
        found.append(f"a stderr line of {len(long[0])} characters")
    return found


def assert_clean(run: Run) -> None:
    """Fail with the run's details when :func:`problems` finds anything."""
    found = problems(run)
    assert not found, f"{'; '.join(found)}\n{run}"


def error_line(run: Run) -> str:
    """The ``attn-tutor: error:`` line a failed run ended with."""
    lines = [line for line in run.err.splitlines() if line.startswith("attn-tutor: error:")]
    assert lines, f"no error line\n{run}"
    return lines[-1]
