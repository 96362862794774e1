"""Benchmark: a lab experiment in the TUI (driven headless by Pilot) against the CLI, in one run.

    python benchmarks/lab_tui.py                      # lab bottleneck at its defaults, 2 rounds
    python benchmarks/lab_tui.py --steps 300 --rounds 3
    python benchmarks/lab_tui.py --experiment teacher-forcing --steps 200

Each round runs ``attn-tutor lab NAME --json`` (its progress bars drawn on a pseudo-terminal,
as a student sees them) and the same experiment with the same settings in the TUI's lab
screen (``Enter`` pressed by Pilot in a headless app), each in a fresh process, one after the
other (CLI first in odd rounds, TUI first in even ones) so that load from elsewhere hits both
alike. Printed per leg: the experiment's own wall
time (``seconds`` in its result: from the first training step to the last evaluation), the
process's wall and CPU time; for the TUI also the UI thread's CPU time as a share of one core
while the experiment ran, how long after Enter the first frame saying "starting" was drawn and
how long "starting…" stayed (until the run's first events were drawn: loading the settings,
the data and the cached kernels, up to a quarter second of it waiting for the screen's next
look), and (with ``--cancel``, in an extra run of each) how long ``c`` took to reach "cancelled" and Ctrl-C
took to end the CLI with its report, both pressed once the progress showed finished steps,
and how long "starting…" stays when Enter is pressed again in that process, its kernels
loaded, as they are once the app's background warm-up has run.

The ratio TUI/CLI is of the medians of the experiment's wall time. Kernels come from the numba
cache (run any lab command once first); the TUI app is started without its background
warm-up of every other kernel, so both legs load the same kernels. The machine's load average
and CPU model are printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tui_paint import cli, cpu_model  # noqa: E402 - the sibling script, for the same CLI and CPU name


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _options(args: argparse.Namespace) -> list[str]:
    return ["--steps", str(args.steps)] if args.steps else []


def run_process(cmd: list[str], *, pty_stderr: bool) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one child; its stderr on a pseudo-terminal when asked."""
    env = dict(os.environ, COLUMNS="100", LINES="30", TERM=os.environ.get("TERM", "xterm-256color"))
    master = slave = None
    if pty_stderr:
        master, slave = pty.openpty()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave if pty_stderr else subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
    drain = None
    if pty_stderr:
        os.close(slave)

        def read_all() -> None:
            while True:
                try:
                    if not os.read(master, 65536):
                        break
                except OSError:
                    break

        drain = threading.Thread(target=read_all, daemon=True)
        drain.start()
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if drain is not None:
        drain.join(2)
        os.close(master)
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, out


def cli_cancel(cmd: list[str]) -> float:
    """Seconds from Ctrl-C (sent once a progress bar shows finished steps) to the CLI's exit
    with its report."""
    import re
    import select

    env = dict(os.environ, COLUMNS="100", LINES="30", TERM=os.environ.get("TERM", "xterm-256color"))
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                            env=env, cwd=ROOT)
    os.close(slave)
    seen = b""
    steps = re.compile(rb"\b[1-9]\d*/\d+")
    try:
        while not steps.search(re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen)):
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 65536)
        proc.send_signal(signal.SIGINT)
        t0 = time.perf_counter()
        drain = threading.Thread(target=lambda: _drain(master), daemon=True)
        drain.start()
        proc.stdout.read()
        code = proc.wait()
        seconds = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    drain.join(2)
    os.close(master)
    if code != 130:
        raise SystemExit(f"{' '.join(cmd)}: exit status {code} after Ctrl-C (expected 130)")
    return seconds


def _drain(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


# ---------------------------------------------------------------------------- the TUI child


def tui_child(name: str, steps: int | None, cancel: bool) -> None:
    """In a fresh process: open the lab screen on ``name``, press Enter, wait; print JSON."""
    import asyncio

    sys.path.insert(0, str(ROOT))
    from tutor.app import StartAt, make_app
    from tutor.lab.experiments import get

    module = get(name).load()
    settings = module.from_options(seed=0, steps=steps)
    app = make_app(StartAt("lab", name, lab_settings={name: settings}), warm_up=False)

    def status_text(screen) -> str:
        return str(screen.query_one("#lab-status").content)

    painted: dict[str, float] = {}
    display = type(app)._display

    def timed_display(self, screen, renderable) -> None:
        """The headless app's frames: note when the first one shows "starting"."""
        display(self, screen, renderable)
        if renderable is not None and "enter" in painted and "starting" not in painted:
            try:
                if "starting" in status_text(self.screen):
                    painted["starting"] = time.perf_counter()
            except Exception:  # noqa: BLE001 - another screen, or not composed yet
                pass

    type(app)._display = timed_display
    # what the screen did, stamped when it did it (Pilot's press() returns only once the app
    # is idle, which it never is while training: up to seconds later)
    from tutor.screens.lab import LabScreen

    shown, ended = LabScreen._show_view, LabScreen._end_run

    def stamped_show(self, *args) -> None:
        painted.setdefault("heard", time.perf_counter())
        shown(self, *args)

    def stamped_end(self) -> None:
        painted["ended"] = time.perf_counter()
        ended(self)

    LabScreen._show_view, LabScreen._end_run = stamped_show, stamped_end

    async def drive() -> dict:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            screen = app.screen
            out: dict = {}
            ui0, cpu0, t0 = time.thread_time(), time.process_time(), time.perf_counter()
            painted["enter"] = t0
            await pilot.press("enter")
            while "starting" not in painted and screen.running is not None:
                await asyncio.sleep(0.01)
            out["starting_s"] = painted.get("starting", float("nan")) - t0
            while "heard" not in painted and screen.running is not None:  # "starting…" shown
                await asyncio.sleep(0.02)
            out["started_s"] = painted.get("heard", float("nan")) - t0  # its first events drawn
            if cancel:
                painted["c"] = time.perf_counter()
                await pilot.press("c")
            while screen.running is not None:
                await asyncio.sleep(0.25)
            t1 = painted["ended"]
            out["ui_cpu_s"] = time.thread_time() - ui0
            out["cpu_s"] = time.process_time() - cpu0
            out["run_wall_s"] = time.perf_counter() - t0
            if cancel:
                out["cancel_s"] = t1 - painted["c"]
                out["cancelled"] = "cancelled" in status_text(screen)
                await pilot.pause()
                painted.pop("heard")
                t2 = time.perf_counter()  # again: the kernels are loaded now, as after the
                await pilot.press("enter")  # app's own warm-up
                while "heard" not in painted and screen.running is not None:
                    await asyncio.sleep(0.02)
                out["restarted_s"] = painted.get("heard", float("nan")) - t2
                await pilot.press("c")
                while screen.running is not None:
                    await asyncio.sleep(0.05)
            out["seconds"] = getattr(screen.result, "seconds", float("nan"))
            return out

    print(json.dumps(asyncio.run(drive())))


# ---------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", default="bottleneck",
                    choices=("bottleneck", "teacher-forcing"))
    ap.add_argument("--steps", type=int, default=None, help="training steps (default: the experiment's)")
    ap.add_argument("--rounds", type=int, default=2, help="CLI/TUI pairs, the order alternating")
    ap.add_argument("--cancel", action="store_true", help="also time c / Ctrl-C → cancelled")
    ap.add_argument("--tui-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tui_child:
        tui_child(args.experiment, args.steps, args.cancel)
        return

    print(f"lab TUI vs CLI: {args.experiment} {'--steps ' + str(args.steps) if args.steps else '(defaults)'}; "
          f"{cpu_model()}, {os.cpu_count()} cores; {load()}")
    child = [sys.executable, __file__, "--tui-child", "--experiment", args.experiment, *_options(args)]
    cli_runs, tui_runs = [], []

    def run_cli(r: int) -> None:
        wall, cpu, out = run_process(cli() + ["lab", args.experiment, "--json", *_options(args)],
                                     pty_stderr=True)
        data = json.loads(out)
        cli_runs.append({"seconds": data.get("seconds", float("nan")), "wall": wall, "cpu": cpu})
        print(f"  round {r + 1} CLI: experiment {cli_runs[-1]['seconds']:.1f} s; process wall "
              f"{wall:.1f} s, CPU {cpu:.1f} s; {load()}", flush=True)

    def run_tui(r: int) -> None:
        wall, cpu, out = run_process(child, pty_stderr=False)
        data = json.loads(out.strip().splitlines()[-1])
        tui_runs.append({**data, "wall": wall, "cpu": cpu})
        share = data["ui_cpu_s"] / data["run_wall_s"]
        print(f"  round {r + 1} TUI: experiment {data['seconds']:.1f} s; process wall {wall:.1f} s, "
              f"CPU {cpu:.1f} s; UI thread {data['ui_cpu_s']:.2f} s CPU = {100 * share:.1f} % of a "
              f"core; first frame saying 'starting' {1000 * data['starting_s']:.0f} ms after Enter, "
              f"training shown {data['started_s']:.2f} s after it; "
              f"{load()}", flush=True)

    for r in range(args.rounds):  # CLI first in odd rounds, TUI first in even ones
        for leg in ((run_cli, run_tui) if r % 2 == 0 else (run_tui, run_cli)):
            leg(r)
    if args.cancel:
        _, _, out = run_process(child + ["--cancel"], pty_stderr=False)
        data = json.loads(out.strip().splitlines()[-1])
        print(f"  TUI cancel: c → {'cancelled' if data['cancelled'] else 'NOT cancelled'} in "
              f"{data['cancel_s']:.2f} s; Enter again (kernels loaded): training shown after "
              f"{data['restarted_s']:.2f} s; {load()}")
        seconds = cli_cancel(cli() + ["lab", args.experiment, "--json", *_options(args)])
        print(f"  CLI cancel: Ctrl-C → report printed and exit 130 in {seconds:.2f} s; {load()}")

    def med(runs: list[dict], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    if not (tui_runs and cli_runs):  # --rounds 0: the cancel figures only
        print(load())
        return
    ratio = med(tui_runs, "seconds") / med(cli_runs, "seconds")
    share = statistics.median(r["ui_cpu_s"] / r["run_wall_s"] for r in tui_runs)
    print(f"median experiment wall: CLI {med(cli_runs, 'seconds'):.1f} s, TUI {med(tui_runs, 'seconds'):.1f} s "
          f"-> TUI/CLI {ratio:.2f} (goal <= 1.1); process CPU: CLI {med(cli_runs, 'cpu'):.1f} s, "
          f"TUI {med(tui_runs, 'cpu'):.1f} s -> {med(tui_runs, 'cpu') / med(cli_runs, 'cpu'):.2f}; UI thread {100 * share:.1f} % of a core (goal <= 10 %)")
    print(load())


if __name__ == "__main__":
    main()
