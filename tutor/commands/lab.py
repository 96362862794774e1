"""`attn-tutor lab ...`: train a tiny seq2seq live and test the lecture's claims.

Subcommands (one per experiment in :mod:`engine.lab`): ``bottleneck``, ``teacher-forcing``,
``alignment``, ``train``. Each shows a progress bar on stderr (when it is a terminal),
prints tables and terminal plots to stdout, takes ``--seed`` and ``--json``, and stops
cleanly on Ctrl-C, reporting what it has (exit status 130). A second Ctrl-C aborts.

Only typer is imported at module level; numpy, numba, Rich and the engine load inside the
commands so ``attn-tutor --help`` stays fast.

JSON (``--json``): one object, ``"schema": 1``; see ``docs/lab-json.md``.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

NAME = "lab"
HELP = "Train a tiny seq2seq live: bottleneck, teacher forcing, alignment, scaling."

app = typer.Typer(help=HELP, invoke_without_command=True)


@app.callback()
def lab(ctx: typer.Context) -> None:
    """Bare `attn-tutor lab`: the TUI's lab screen on a terminal, this help otherwise."""
    if ctx.invoked_subcommand is not None:
        return
    from tutor.terminal import is_interactive

    if is_interactive():
        from tutor.app import StartAt, run_app

        run_app(StartAt("lab"))
    else:
        typer.echo(ctx.get_help())

# More experiments (`scaling`, `saturation`) are registered at the end of this file.

EXIT_INTERRUPTED = 130
TF_THRESHOLD = 0.5  # loss per token the teacher-forcing summary times each run to


class Task(str, Enum):
    reverse = "reverse"
    copy = "copy"
    sort = "sort"


class Cell(str, Enum):
    gru = "gru"
    rnn = "rnn"


class Decoder(str, Enum):
    attention = "attention"
    fixed = "fixed"


SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for initialisation, data and sampling.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the results as JSON (schema: docs/lab-json.md).")]
AsciiOpt = Annotated[bool, typer.Option("--ascii", help="7-bit ASCII tables and plots, no colour.")]


# ---------------------------------------------------------------------------- helpers


def _emit(json_out: bool, payload_fn, human_fn) -> None:
    if json_out:
        from tutor.lab_view import dumps

        typer.echo(dumps(payload_fn()))
    else:
        human_fn()


def _note(msg: str) -> None:
    typer.echo(msg, err=True)


def _int(value, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _finish(interrupted: bool) -> None:
    if interrupted:
        _note("attn-tutor: interrupted; the results above cover the steps completed")
        raise typer.Exit(EXIT_INTERRUPTED)


# ---------------------------------------------------------------------------- bottleneck


@app.command("bottleneck", help="Fixed context vs attention on reversal, by sequence length "
                                "(Bahdanau et al. 2014, Fig. 2), trained here in about a minute.")
def bottleneck_cmd(
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    steps: Annotated[Optional[int], typer.Option("--steps", min=1, hidden=True)] = None,
    min_len: Annotated[Optional[int], typer.Option("--min-len", min=1, hidden=True)] = None,
    max_len: Annotated[Optional[int], typer.Option("--max-len", min=1, hidden=True)] = None,
    per_bucket: Annotated[Optional[int], typer.Option("--per-bucket", min=1, hidden=True)] = None,
    hidden: Annotated[Optional[int], typer.Option("--hidden", min=1, hidden=True)] = None,
    sequential: Annotated[bool, typer.Option("--sequential", hidden=True)] = False,
) -> None:
    from tutor.errors import user_errors

    user_errors(_bottleneck)(seed, json_out, ascii_only, steps, min_len, max_len, per_bucket,
                             hidden, sequential)


def _bottleneck(seed, json_out, ascii_only, steps, min_len, max_len, per_bucket, hidden, sequential):
    from dataclasses import replace

    from engine import lab
    from tutor import lab_view as view

    ascii_only = view.ascii_wanted(ascii_only)

    s = lab.BottleneckSettings()
    tr = s.train
    tr = replace(tr, seed=seed, steps=steps or tr.steps, min_len=min_len or tr.min_len,
                 max_len=max_len or tr.max_len)
    s = replace(s, train=tr, per_bucket=per_bucket or s.per_bucket,
                hidden_dim=hidden or s.hidden_dim, parallel=not sequential)
    _note(f"lab bottleneck: training a fixed-context and an attention model on `{tr.task}`, "
          f"lengths {tr.min_len}-{tr.max_len}, {tr.steps} steps of {tr.batch_size} each "
          "(Ctrl-C stops early and reports)")
    view.warm_up_kernels(view.progress_enabled())
    with view.Stopper() as stop, view.LabProgress(["attention", "fixed"], tr.steps,
                                                  view.progress_enabled()) as bar:
        res = lab.bottleneck(s, on_progress=bar.callback, should_stop=stop)

    def human() -> None:
        console = view.console(ascii_only)
        cfg = s.model_config("attention")
        a_steps, f_steps = res.runs["attention"].steps, res.runs["fixed"].steps
        steps_txt = (f"{a_steps} training steps" if a_steps == f_steps
                     else f"{a_steps} (attention) and {f_steps} (fixed) training steps")
        console.print(f"Bottleneck: `{tr.task}` digit sequences, {view.model_desc(cfg)}; "
                      f"{steps_txt} of {tr.batch_size} sequences per model; "
                      f"free-running greedy decoding on {s.per_bucket} held-out sequences per length.",
                      markup=False)
        runs = {"attention": res.attention, "fixed": res.fixed}
        console.print(view.accuracy_table(res.buckets, runs, ascii=ascii_only))
        view.print_plot(console, view.accuracy_plot(runs, ascii=ascii_only), ascii_only)
        up_to_30 = [a for a in res.attention if a.hi <= 30]
        if up_to_30:
            worst = min(a.token_accuracy for a in up_to_30)
            console.print(f"Attention up to length 30: lowest token accuracy {view.pct(worst).strip()} "
                          f"({'≥' if not ascii_only else '>='} 95%: {'yes' if worst >= 0.95 else 'no'}).",
                          markup=False)
        gap = res.gap_at_longest()
        last = res.attention[-1]
        console.print(f"Longest bucket ({last.lo}-{last.hi}): the fixed context is {100 * gap:.1f} points "
                      f"below attention ({'the bottleneck is reproduced' if gap >= 0.30 else 'gap under 30 points'}).",
                      markup=False)
        a, f = res.runs["attention"], res.runs["fixed"]
        console.print(f"Wall time {res.seconds:.1f} s (training: attention {a.seconds:.1f} s, "
                      f"{a.steps_per_second:.1f} steps/s; fixed {f.seconds:.1f} s, "
                      f"{f.steps_per_second:.1f} steps/s).", markup=False)

    _emit(json_out, lambda: view.bottleneck_json(res), human)
    _finish(res.interrupted)


# ---------------------------------------------------------------------------- teacher forcing


@app.command("teacher-forcing", help="The same model trained with teacher-forcing ratio 1.0 "
                                     "and 0.0: loss curves side by side.")
def teacher_forcing_cmd(
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    steps: Annotated[Optional[int], typer.Option("--steps", min=1, hidden=True)] = None,
    max_len: Annotated[Optional[int], typer.Option("--max-len", min=1, hidden=True)] = None,
    per_bucket: Annotated[Optional[int], typer.Option("--per-bucket", min=1, hidden=True)] = None,
    sequential: Annotated[bool, typer.Option("--sequential", hidden=True)] = False,
) -> None:
    from tutor.errors import user_errors

    user_errors(_teacher_forcing)(seed, json_out, ascii_only, steps, max_len, per_bucket, sequential)


def _teacher_forcing(seed, json_out, ascii_only, steps, max_len, per_bucket, sequential):
    from dataclasses import replace

    from engine import lab
    from tutor import lab_view as view

    ascii_only = view.ascii_wanted(ascii_only)

    s = lab.TeacherForcingSettings()
    tr = replace(s.train, seed=seed, steps=steps or s.train.steps,
                 max_len=max_len or s.train.max_len)
    tr = replace(tr, min_len=min(tr.min_len, tr.max_len))
    s = replace(s, train=tr, per_bucket=per_bucket or s.per_bucket, parallel=not sequential)
    names = [lab.ratio_label(r) for r in s.ratios]
    _note(f"lab teacher-forcing: the same {s.decoder} model trained with ratios "
          f"{', '.join(f'{r:g}' for r in s.ratios)} for {tr.steps} steps on `{tr.task}`, "
          f"lengths {tr.min_len}-{tr.max_len} (Ctrl-C stops early and reports)")
    view.warm_up_kernels(view.progress_enabled())
    with view.Stopper() as stop, view.LabProgress(names, tr.steps, view.progress_enabled()) as bar:
        res = lab.teacher_forcing(s, on_progress=bar.callback, should_stop=stop)

    def human() -> None:
        console = view.console(ascii_only)
        console.print(f"Teacher forcing: `{tr.task}`, {view.model_desc(s.model_config())}, "
                      f"{s.decoder} decoder; ratio 1 feeds the true previous token, ratio 0 the "
                      "model's own guess.", markup=False)
        view.print_plot(console, view.loss_plot(res.curves(), ascii=ascii_only), ascii_only)
        runs = {name: r.accuracy for name, r in res.runs.items()}
        first = next(iter(res.runs.values()))
        buckets = [(a.lo, a.hi) for a in first.accuracy]
        console.print("Free-running greedy accuracy on held-out sequences:")
        console.print(view.accuracy_table(buckets, runs, ascii=ascii_only))
        for name, r in res.runs.items():
            tail = r.curve.losses[-50:]
            mean = sum(tail) / len(tail) if tail else float("nan")
            reached = r.curve.first_below(TF_THRESHOLD)
            console.print(f"{name}: loss per token over the last {len(tail)} steps {mean:.3f}; "
                          f"below {TF_THRESHOLD} after "
                          f"{reached if reached is not None else 'never (' + str(r.steps) + ' steps)'}"
                          f"{' steps' if reached is not None else ''}; step-to-step jumps "
                          f"{r.curve.roughness():.3f}; {r.steps} steps in {r.seconds:.1f} s.",
                          markup=False)
        console.print("Note: each curve is scored on the inputs its own regime feeds (true or "
                      "predicted history); the table compares both the same way.", markup=False)

    _emit(json_out, lambda: view.teacher_forcing_json(res), human)
    _finish(res.interrupted)


# ---------------------------------------------------------------------------- alignment


@app.command("alignment", help="What a trained attention model attends to: its weights on a "
                               "test sequence as a heatmap (reversal: the anti-diagonal).")
def alignment_cmd(
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    task: Annotated[Task, typer.Option("--task", help="What the model learns.")] = Task.reverse,
    digits: Annotated[Optional[str], typer.Option(
        "--digits", metavar="DIGITS", help="The test sequence, e.g. 31415926 (default: random).",
        show_default=False)] = None,
    length: Annotated[int, typer.Option("--length", min=1, max=60,
                                        help="Digits in the random test sequence.")] = 12,
    load: Annotated[Optional[Path], typer.Option(
        "--load", metavar="FILE", help="Use an attention model saved by `lab train --save` "
        "instead of training one.", show_default=False)] = None,
    save: Annotated[Optional[Path], typer.Option(
        "--save", metavar="FILE", help="Also write the learned weights: .json (for `attn-tutor "
        "heatmap --from FILE`), or the drawn heatmap as .txt, .svg or .html.",
        show_default=False)] = None,
    steps: Annotated[Optional[int], typer.Option("--steps", min=1, hidden=True)] = None,
    max_len: Annotated[Optional[int], typer.Option("--max-len", min=1, hidden=True)] = None,
) -> None:
    from tutor.errors import user_errors

    user_errors(_alignment)(seed, json_out, ascii_only, task.value, digits, length, load, steps, max_len,
                            save)


def _alignment(seed, json_out, ascii_only, task, digits, length, load, steps, max_len, save=None):
    from dataclasses import replace

    from engine import lab
    from tutor import lab_view as view
    from tutor.errors import UserError

    ascii_only = view.ascii_wanted(ascii_only)
    if save is not None and save.suffix.lower() not in (".json", ".txt", ".svg", ".html"):
        shown = repr(save.suffix) if save.suffix else "no extension"  # fail before any training
        raise UserError(f"--save {save}: unknown file type {shown}; expected .json, .txt, .svg or .html")

    seq = None
    if digits is not None:
        if not digits.isdigit() or not digits.isascii():
            raise UserError(f"--digits: expected only the digits 0-9, got {digits!r}")
        seq = [int(c) for c in digits]
    s = lab.AlignmentSettings(test_len=length)
    tr = replace(s.train, seed=seed, task=task, steps=steps or s.train.steps,
                 max_len=max_len or s.train.max_len)
    tr = replace(tr, min_len=min(tr.min_len, tr.max_len))
    s = replace(s, train=tr)
    model = None
    if load is not None:
        model, record = view.load_model(load, decoder="attention")
        if record.get("task") and digits is None and task == "reverse" and record["task"] != task:
            tr = replace(tr, task=record["task"])
            s = replace(s, train=tr)
        _note(f"lab alignment: using the attention model in {load} (task `{tr.task}`)")
    else:
        _note(f"lab alignment: training an attention model on `{tr.task}`, lengths "
              f"{tr.min_len}-{tr.max_len}, {tr.steps} steps (Ctrl-C stops early and shows it)")
    view.warm_up_kernels(view.progress_enabled())
    with view.Stopper() as stop, view.LabProgress(["attention"] if model is None else [], tr.steps,
                                                  view.progress_enabled() and model is None) as bar:
        res = lab.alignment(s, model=model, digits=seq, on_progress=bar.callback, should_stop=stop)

    def human() -> None:
        console = view.console(ascii_only)
        console.print(view.alignment_view(res, ascii=ascii_only, color=not console.no_color))
        for line in view.alignment_summary(res, ascii=ascii_only):
            console.print(line, markup=False)

    if save is not None:
        view.save_alignment(save, res)
        _note(f"wrote {save}")
    _emit(json_out, lambda: view.alignment_json(res, s if model is None else None), human)
    _finish(res.training is not None and res.training.interrupted)


# ---------------------------------------------------------------------------- train


@app.command("train", help="Train one model on a task of your choice; --save it and --load "
                           "it again (.npz with a metadata record).")
def train_cmd(
    task: Annotated[Optional[Task], typer.Option("--task", help="What the model learns "
                                                 "[default: reverse, or the loaded model's].",
                                                 show_default=False)] = None,
    cell: Annotated[Cell, typer.Option("--cell", help="Recurrent cell: GRU or the plain tanh RNN.")] = Cell.gru,
    decoder: Annotated[Decoder, typer.Option("--decoder", help="Bahdanau attention or a fixed "
                                             "context C = H_T.")] = Decoder.attention,
    bidirectional: Annotated[bool, typer.Option("--bidirectional/--unidirectional",
                                                help="Encoder reads both ways.")] = True,
    hidden: Annotated[int, typer.Option("--hidden", min=1, max=1024, help="Hidden size d_h.")] = 64,
    embed: Annotated[int, typer.Option("--embed", min=1, max=1024, help="Embedding size d_x.")] = 16,
    attn_dim: Annotated[int, typer.Option("--attn-dim", min=1, max=1024,
                                          help="Hidden size of the additive scorer.")] = 32,
    ratio: Annotated[float, typer.Option("--ratio", min=0.0, max=1.0,
                                         help="Teacher-forcing ratio (1 = always the truth).")] = 1.0,
    steps: Annotated[int, typer.Option("--steps", min=0, help="Training steps (0 with --load: "
                                       "just evaluate).")] = 1000,
    batch: Annotated[int, typer.Option("--batch", min=1, max=4096, help="Sequences per step.")] = 32,
    lr: Annotated[float, typer.Option("--lr", min=1e-6, max=1.0, help="Adam learning rate at the "
                                      "start (cosine decay to a tenth of it).")] = 3e-3,
    clip: Annotated[float, typer.Option("--clip", min=0.0, help="Global gradient-norm clip (0 = off).")] = 5.0,
    min_len: Annotated[Optional[int], typer.Option(
        "--min-len", min=1, max=200, help="Shortest training sequence [default: 5, or the loaded "
        "model's].", show_default=False)] = None,
    max_len: Annotated[Optional[int], typer.Option(
        "--max-len", min=1, max=200, help="Longest training sequence [default: 20, or the loaded "
        "model's].", show_default=False)] = None,
    save: Annotated[Optional[Path], typer.Option("--save", metavar="FILE.npz",
                                                 help="Write the trained weights here.",
                                                 show_default=False)] = None,
    load: Annotated[Optional[Path], typer.Option("--load", metavar="FILE.npz",
                                                 help="Start from these weights (their sizes, cell "
                                                 "and decoder win over the options).",
                                                 show_default=False)] = None,
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
) -> None:
    from tutor.errors import user_errors

    user_errors(_train)(task.value if task else None, cell.value, decoder.value, bidirectional,
                        hidden, embed, attn_dim, ratio, steps, batch, lr, clip, min_len, max_len,
                        save, load, seed, json_out, ascii_only)


def _train(task, cell, decoder, bidirectional, hidden, embed, attn_dim, ratio, steps, batch, lr,
           clip, min_len, max_len, save, load, seed, json_out, ascii_only):
    from engine import lab
    from engine.seq2seq import Seq2SeqConfig
    from tutor import lab_view as view
    from tutor.errors import UserError

    ascii_only = view.ascii_wanted(ascii_only)

    if save is not None and save.suffix != ".npz":
        raise UserError(f"--save: {save}: the weights file must end in .npz")
    model = None
    prior_steps = 0
    record: dict = {}
    if load is not None:
        model, record = view.load_model(load)
        config = model.config
        task = task or record.get("task")
        prior_steps = int(record.get("steps", 0) or 0)
    else:
        if steps == 0:
            raise UserError("--steps 0 only makes sense with --load (evaluate a saved model)")
        config = Seq2SeqConfig(vocab_size=lab.VOCAB_SIZE, embed_dim=embed, hidden_dim=hidden,
                               attn_dim=attn_dim, cell=cell, decoder=decoder,
                               bidirectional=bidirectional)
    task = task if task in lab.TASKS else "reverse"
    min_len = min_len or _int(record.get("min_len"), 5)
    max_len = max_len or _int(record.get("max_len"), 20)
    if min_len > max_len:
        raise UserError(f"--min-len {min_len} is longer than --max-len {max_len}")
    if config.vocab_size != lab.VOCAB_SIZE:
        raise UserError(f"{load}: the model has {config.vocab_size} tokens; the lab's tasks use {lab.VOCAB_SIZE}")
    settings = lab.TrainSettings(task=task, min_len=min_len, max_len=max_len, steps=steps,
                                 batch_size=batch, lr=lr, max_grad_norm=clip,
                                 teacher_forcing_ratio=ratio, seed=seed)
    what = f"continuing {load}" if load else "a new model"
    _note(f"lab train: {what}: {config.decoder} decoder, {view.model_desc(config)}, "
          f"{config.n_params} parameters; `{task}`, lengths {min_len}-{max_len}, {steps} steps "
          f"(Ctrl-C stops early, saves and reports)")
    view.warm_up_kernels(view.progress_enabled())
    with view.Stopper() as stop, view.LabProgress([config.decoder], steps,
                                                  view.progress_enabled() and steps > 0) as bar:
        res = lab.train(config, settings, model, on_progress=bar.callback, should_stop=stop)
    if save is not None:
        view.save_model(save, res.model, {"task": task, "min_len": min_len, "max_len": max_len,
                                          "steps": prior_steps + res.steps,
                                          "seed": seed, "teacher_forcing_ratio": ratio})
        _note(f"saved the weights to {save}")

    def human() -> None:
        console = view.console(ascii_only)
        console.print(f"{config.decoder} model, {view.model_desc(config)}, `{task}`: {res.steps} steps "
                      f"in {res.seconds:.1f} s.", markup=False)
        if res.curve.losses:
            view.print_plot(console, view.loss_plot([res.curve], ascii=ascii_only, height=8), ascii_only)
        console.print("Free-running greedy accuracy on held-out sequences:")
        console.print(view.accuracy_table([(a.lo, a.hi) for a in res.accuracy],
                                          {config.decoder: res.accuracy}, ascii=ascii_only))

    _emit(json_out, lambda: view.train_json(res, config, str(save) if save else None,
                                            str(load) if load else None), human)
    _finish(res.interrupted)


# ---------------------------------------------------------------------------- more experiments
# `lab scaling` and `lab saturation` live in their own module; registered last, so `lab --help`
# lists them after the four above.
from tutor.commands import lab_scaling  # noqa: E402

lab_scaling.register(app)
