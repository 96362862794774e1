"""Benchmark: how long the full-screen tutor takes to paint its first screen (warm caches).

    python benchmarks/tui_paint.py [--runs 7]

Each run starts ``attn-tutor`` (no arguments) on a fresh pseudo-terminal of 100×30, reads
what it writes until the home screen's menu appears (the word "Learn"), notes the wall time
since the start and the CPU time the process had used by then (``/proc``), and quits with
Ctrl-Q. Printed: median and min of both, with the machine's load average and CPU model. The
kernel warm-up starts after the first paint, so it is not in these figures; a progress store
in a temporary ``ATTN_TUTOR_HOME`` is used.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import platform
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

MARK = b"Learn"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bytecode_note() -> str:
    """A warning line when Python may not write .pyc files (every start then recompiles the
    tutor's modules in an editable install), else ''."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return ("note: PYTHONDONTWRITEBYTECODE is set; modules without a .pyc are compiled on "
                "every start (a pip install writes them at install time)")
    return ""


def cli() -> list[str]:
    script = Path(sys.executable).with_name("attn-tutor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tutor"]


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_paint(cmd: list[str], home: str, timeout: float = 60.0) -> tuple[float, float]:
    """(wall s, CPU s) from the start of ``cmd`` on a new pseudo-terminal to its first screen."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", ATTN_TUTOR_HOME=home)
    env.pop("NO_COLOR", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True, cwd=tempfile.gettempdir())
    os.close(slave)
    seen, result = b"", None
    try:
        while time.perf_counter() - t0 < timeout:
            ready, _, _ = select.select([master], [], [], 0.005)
            if not ready:
                continue
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
            if MARK in seen:
                result = (time.perf_counter() - t0, process_cpu(proc.pid))
                break
        os.write(master, b"\x11")  # Ctrl-Q
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    if result is None:
        raise SystemExit(f"{' '.join(cmd)}: no first screen within {timeout:.0f} s")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--command", help="what to start instead of attn-tutor (e.g. 'python -m tutor')")
    args = ap.parse_args()
    cmd = args.command.split() if args.command else cli()
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="attn-home-") as home:
        first_paint(cmd, home)  # byte-compile, open the store once
        walls, cpus = zip(*(first_paint(cmd, home) for _ in range(args.runs)))
    load1 = os.getloadavg()
    print(f"TUI first paint ({' '.join(cmd)}, {args.runs} runs); {cpu_model()}, {os.cpu_count()} cores; "
          f"load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end")
    if bytecode_note():
        print(bytecode_note())
    print(f"  wall: median {statistics.median(walls):.3f} s, min {min(walls):.3f} s (goal 0.5 s)")
    print(f"  CPU by then: median {statistics.median(cpus):.3f} s, min {min(cpus):.3f} s")


if __name__ == "__main__":
    main()
