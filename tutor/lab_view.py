"""Rendering for ``attn-tutor lab``: progress bars, accuracy tables, plots, JSON, weight files.

Everything takes the result dataclasses of :mod:`engine.lab` and returns text, Rich
renderables or plain dicts; the command module decides where they go (data to stdout,
progress to stderr).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tutor.errors import UserError
from tutor.plot import Plot, Series, line_plot

JSON_VERSION = 1
WEIGHTS_FORMAT = "attn-tutor-seq2seq"
WEIGHTS_VERSION = 1


def pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:5.1f}%"


# ---------------------------------------------------------------------------- progress


class LabProgress:
    """A Rich progress display on stderr, one bar per run; ``callback`` is the engine's
    ``on_progress`` (safe to call from the training threads)."""

    def __init__(self, runs: Sequence[str], total: int, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._ids: dict[str, Any] = {}
        self._runs = list(runs)
        self._total = total
        self._progress = None

    def __enter__(self) -> LabProgress:
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self._progress = Progress(
            TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=False,
        )
        self._progress.__enter__()
        for run in self._runs:
            self._ids[run] = self._progress.add_task(run, total=self._total, status="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def callback(self, event: Any) -> None:
        if self._progress is None:
            return
        with self._lock:
            task = self._ids.get(event.run)
            if task is None:
                task = self._ids[event.run] = self._progress.add_task(event.run, total=event.total, status="")
            if event.phase == "train":
                status = f"loss {event.loss:.3f}/token" if event.loss is not None else ""
                self._progress.update(task, completed=event.step, status=status)
            elif event.phase == "evaluate":
                self._progress.update(task, completed=event.step, status="evaluating…")
            else:
                self._progress.update(task, completed=event.step,
                                      status="done" if event.step >= event.total else "stopped")


# ---------------------------------------------------------------------------- run control


class Stopper:
    """First Ctrl-C asks the experiment to stop after the current step; a second aborts."""

    def __init__(self) -> None:
        import threading

        self.event = threading.Event()
        self._old = None

    def __enter__(self) -> Stopper:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():  # signals only work there
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        import sys

        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()
        print("\nattn-tutor: stopping after the current step (Ctrl-C again to abort)…",
              file=sys.stderr)

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def __call__(self) -> bool:
        return self.event.is_set()


def warm_up_kernels(spinner: bool) -> None:
    """Load the kernels before the progress bars start (a first run compiles them), behind
    a spinner on stderr when ``spinner``."""
    from engine import lab

    if not spinner:
        lab.warm_up()
        return
    from rich.console import Console

    with Console(stderr=True).status("loading the numba kernels (the first run compiles them, "
                                     "up to a minute)…"):
        lab.warm_up()


def progress_enabled() -> bool:
    """Progress bars go to stderr, and only when it is a real terminal."""
    import os
    import sys

    return sys.stderr.isatty() and os.environ.get("TERM", "") != "dumb"


def console(ascii_only: bool) -> Any:
    """The stdout console: colour only on a terminal, never with NO_COLOR or --ascii."""
    from rich.console import Console

    from tutor.terminal import use_color

    color = use_color() and not ascii_only
    return Console(highlight=False, no_color=not color, color_system="auto" if color else None,
                   emoji=False)


def model_desc(cfg: Any) -> str:
    """``GRU, hidden 64, bidirectional encoder``."""
    enc = "bidirectional " if cfg.bidirectional else ""
    return f"{cfg.cell.upper()}, hidden {cfg.hidden_dim}, {enc}encoder"


def ascii_wanted(ascii_only: bool) -> bool:
    """--ascii, or a terminal that says it cannot do better (TERM=dumb)."""
    import os

    return ascii_only or os.environ.get("TERM", "") == "dumb"


def print_plot(console: Any, plot: Plot, ascii_only: bool) -> None:
    """Plain text without colour, the coloured Rich version otherwise."""
    if console.no_color or ascii_only:
        console.print(plot.text(), markup=False, highlight=False)
    else:
        console.print(plot.rich())


# ---------------------------------------------------------------------------- tables and plots


def accuracy_table(buckets: Sequence[Any], runs: dict[str, Sequence[Any]], *, ascii: bool = False,
                   title: str = ""):
    """A Rich table: one row per length bucket, token and sequence accuracy per run."""
    from rich import box
    from rich.table import Table

    table = Table(title=title or None, box=box.ASCII if ascii else box.SIMPLE_HEAVY,
                  title_justify="left")
    table.add_column("length", justify="right")
    table.add_column("n", justify="right")
    for name in runs:
        table.add_column(f"{name}\ntoken", justify="right")
        table.add_column(f"{name}\nsequence", justify="right")
    for k, b in enumerate(buckets):
        first = next(iter(runs.values()))[k]
        row = [first.label.replace("–", "-") if ascii else first.label, str(first.n)]
        for accs in runs.values():
            row += [pct(accs[k].token_accuracy), pct(accs[k].sequence_accuracy)]
        table.add_row(*row)
    return table


def table_text(table: Any, width: int = 100) -> str:
    """A Rich table as plain text (no colour)."""
    import io

    from rich.console import Console

    console = Console(width=width, no_color=True, color_system=None, file=io.StringIO())
    console.print(table)
    return console.file.getvalue()


def accuracy_plot(runs: dict[str, Sequence[Any]], *, ascii: bool = False, width: int = 56,
                  height: int = 10) -> Plot:
    """Token accuracy (%) against sequence length: one line per run, a marker per bucket."""
    series = [Series(name, [100 * a.token_accuracy for a in accs],
                     [(a.lo + a.hi) / 2 for a in accs]) for name, accs in runs.items()]
    return line_plot(series, width=width, height=height, y_range=(0, 100), ascii=ascii,
                     markers=True, title="token accuracy (%) by source length",
                     x_label="source length (digits, bucket centre)")


def loss_plot(curves: Sequence[Any], *, ascii: bool = False, width: int = 56, height: int = 10,
              title: str = "training loss per target token (smoothed)") -> Plot:
    """Smoothed loss curves against step, side by side on one pair of axes."""
    series = [Series(c.label, c.smoothed(), list(range(1, len(c.losses) + 1))) for c in curves]
    return line_plot(series, width=width, height=height, title=title, x_label="step", ascii=ascii)


# ---------------------------------------------------------------------------- alignment


def alignment_view(result: Any, *, ascii: bool = False, color: bool = True, width: int | None = None):
    """The attention weights as a heatmap (rows: output tokens, columns: source tokens)."""
    from tutor.heatmap import HeatmapOptions, render_heatmap

    expect = {"reverse": "anti-diagonal", "copy": "diagonal", "sort": "by value"}
    title = f"Learned attention, `{result.task}` (expected: {expect.get(result.task, '?')})"
    return render_heatmap(result.weights, result.row_labels, result.col_labels, title,
                          HeatmapOptions(width=width, color=color and not ascii, ascii=ascii,
                                         kind="weights", scale="matrix"))


def save_alignment(path: Path, result: Any) -> None:
    """Write learned weights: ``.json`` in the format ``attn-tutor heatmap --from`` reads, or
    the drawn heatmap as ``.txt`` / ``.svg`` / ``.html``."""
    title = f"Learned attention, `{result.task}`"
    if path.suffix.lower() == ".json":
        data = {"title": title, "rows": list(result.row_labels), "cols": list(result.col_labels),
                "weights": [[float(x) for x in row] for row in result.weights]}
        try:
            path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--save {path}: could not write it ({exc.strerror or exc})") from None
        return
    from tutor.heatmap import HeatmapOptions, heatmap_text
    from tutor.heatmap.export import export

    plain = heatmap_text(result.weights, result.row_labels, result.col_labels, title,
                         HeatmapOptions(width=100, color=False))
    export(path, plain, lambda: [alignment_view(result, width=100)], width=100, title=title)


def alignment_summary(result: Any, *, ascii: bool = False) -> list[str]:
    """Plain sentences: output vs target, and how much of the attention sits where the task
    says it should."""
    rows = sum(1 for c in result.expected if c is not None)
    where = {"reverse": "the anti-diagonal", "copy": "the diagonal"}.get(
        result.task, "the source position of the digit written")
    which = "digit rows" if result.task != "sort" else "rows of digits that occur once"
    out = [
        f"source: {' '.join(result.col_labels)}",
        f"output: {' '.join(result.row_labels)}  ({'correct' if result.correct else 'target: ' + ' '.join(result.target)})",
    ]
    if rows:
        hits = round(result.argmax_match * rows)
        near = round(result.argmax_near * rows)
        out.append(f"The largest weight of {hits} of {rows} {which} ({pct(result.argmax_match).strip()}) "
                   f"lies on {where}, of {near} ({pct(result.argmax_near).strip()}) within one "
                   f"position of it; mean weight on it {result.mass_on_expected:.2f}.")
    if result.training is not None:
        t = result.training
        out.append(f"Trained for {t.steps} steps in {t.seconds:.1f} s"
                   f"{' (interrupted)' if t.interrupted else ''}.")
    return out


# ---------------------------------------------------------------------------- JSON


def _round(x: float, nd: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, nd)


def _acc(a: Any) -> dict[str, Any]:
    return {"lengths": [a.lo, a.hi], "n": a.n, "token_accuracy": round(a.token_accuracy, 6),
            "sequence_accuracy": round(a.sequence_accuracy, 6)}


def _run(res: Any, curve_points: int = 200) -> dict[str, Any]:
    losses = list(res.curve.losses)
    stride = max(1, math.ceil(len(losses) / curve_points))
    return {
        "steps": res.steps, "seconds": round(res.seconds, 3),
        "steps_per_second": round(res.steps_per_second, 3) if res.steps else None,
        "interrupted": res.interrupted,
        "final_loss": round(float(sum(losses[-25:]) / len(losses[-25:])), 6) if losses else None,
        "loss_curve": {"stride": stride,
                       "loss_per_token": [round(x, 5) for x in res.curve.smoothed()[stride - 1::stride]]},
        "accuracy": [_acc(a) for a in res.accuracy],
    }


def bottleneck_json(result: Any) -> dict[str, Any]:
    att, fix = result.attention, result.fixed
    up_to_30 = [a.token_accuracy for a in att if a.hi <= 30]
    return {
        "schema": JSON_VERSION,
        "experiment": "bottleneck",
        "settings": result.settings.to_dict(),
        "interrupted": result.interrupted,
        "seconds": round(result.seconds, 3),
        "buckets": [{"lengths": [lo, hi], "n": a.n,
                     "attention": {"token_accuracy": round(a.token_accuracy, 6),
                                   "sequence_accuracy": round(a.sequence_accuracy, 6)},
                     "fixed": {"token_accuracy": round(f.token_accuracy, 6),
                               "sequence_accuracy": round(f.sequence_accuracy, 6)}}
                    for (lo, hi), a, f in zip(result.buckets, att, fix)],
        "summary": {
            "attention_min_token_accuracy_up_to_30": round(min(up_to_30), 6) if up_to_30 else None,
            "gap_at_longest_bucket": round(result.gap_at_longest(), 6) if att else None,
        },
        "runs": {name: _run(r) for name, r in result.runs.items()},
    }


def teacher_forcing_json(result: Any) -> dict[str, Any]:
    return {
        "schema": JSON_VERSION,
        "experiment": "teacher-forcing",
        "settings": result.settings.to_dict(),
        "interrupted": result.interrupted,
        "seconds": round(result.seconds, 3),
        "runs": {name: {"teacher_forcing_ratio": r.settings.teacher_forcing_ratio,
                        "first_step_below_0.5": r.curve.first_below(0.5),
                        "roughness": _round(r.curve.roughness()), **_run(r)}
                 for name, r in result.runs.items()},
    }


def alignment_json(result: Any, settings: Any | None) -> dict[str, Any]:
    return {
        "schema": JSON_VERSION,
        "experiment": "alignment",
        "settings": settings.to_dict() if settings is not None else None,
        "task": result.task,
        "source": result.col_labels,
        "output": result.row_labels,
        "target": result.target,
        "correct": result.correct,
        "weights": [[round(float(x), 6) for x in row] for row in result.weights],
        "expected_column": result.expected,
        "argmax_on_expected": round(result.argmax_match, 6),
        "argmax_within_one": round(result.argmax_near, 6),
        "mean_weight_on_expected": round(result.mass_on_expected, 6),
        "training": _run(result.training) if result.training is not None else None,
    }


def train_json(result: Any, config: Any, saved: str | None, loaded: str | None) -> dict[str, Any]:
    return {
        "schema": JSON_VERSION,
        "experiment": "train",
        "model": config.to_dict(),
        "n_params": config.n_params,
        "settings": _settings_dict(result.settings),
        "loaded_from": loaded,
        "saved_to": saved,
        **_run(result),
    }


def _settings_dict(settings: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(settings)


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------------------- weight files


def save_model(path: Path, model: Any, meta: dict[str, Any]) -> None:
    """Write ``model`` to an ``.npz``: one array per parameter plus a JSON record
    (format, version, config, and ``meta``, e.g. the task and training settings)."""
    import numpy as np

    record = {"format": WEIGHTS_FORMAT, "version": WEIGHTS_VERSION,
              "config": model.config.to_dict(), **meta}
    arrays = {f"param/{k}": v for k, v in model.to_arrays().items()}
    path = Path(path)
    if path.suffix != ".npz":
        raise UserError(f"{path}: the weights file must end in .npz")
    try:
        with open(path, "wb") as fh:
            np.savez(fh, __record__=np.array(json.dumps(record)), **arrays)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the weights ({exc.strerror or exc})") from None


def load_model(path: Path, *, decoder: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Read a file written by :func:`save_model`; returns (model, record).

    Raises:
        UserError: one line saying why the file cannot be used (missing, not an attn-tutor
            weights file, wrong version, arrays of the wrong shape for the recorded config,
            or not the ``decoder`` kind asked for).
    """
    import zipfile

    import numpy as np

    from engine.seq2seq import Seq2Seq, Seq2SeqConfig

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such weights file")
    if not zipfile.is_zipfile(path):
        raise UserError(f"{path}: not an .npz weights file; save one with "
                        "`attn-tutor lab train --save FILE.npz`")
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__record__" not in data.files:
                raise UserError(f"{path}: not an attn-tutor weights file (no record); save one with "
                                "`attn-tutor lab train --save FILE.npz`")
            record = json.loads(str(data["__record__"]))
            arrays = {k.split("/", 1)[1]: data[k] for k in data.files if k.startswith("param/")}
    except UserError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable .npz weights file ({str(exc).splitlines()[0]})") from None
    if not isinstance(record, dict) or record.get("format") != WEIGHTS_FORMAT:
        raise UserError(f"{path}: not an attn-tutor seq2seq weights file")
    if record.get("version") != WEIGHTS_VERSION:
        raise UserError(f"{path}: weights format version {record.get('version')!r}; this attn-tutor "
                        f"reads version {WEIGHTS_VERSION}")
    try:
        config = Seq2SeqConfig(**record["config"])
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"{path}: the recorded model config is invalid ({exc})") from None
    try:
        model = Seq2Seq.from_arrays(config, arrays)
    except ValueError as exc:
        raise UserError(f"{path}: wrong shape for the recorded model: {exc}") from None
    if decoder is not None and config.decoder != decoder:
        raise UserError(f"{path}: holds a model with a {config.decoder} decoder; this needs one "
                        f"with an {decoder} decoder")
    return model, record
