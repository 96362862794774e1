"""`attn-tutor lab ...`: train a tiny seq2seq live and test the lecture's claims.

One subcommand per experiment of :mod:`tutor.lab.experiments`: ``bottleneck``,
``teacher-forcing``, ``alignment``, ``train``, ``transformer`` (``--rnn`` is the table's
``transformer-vs-rnn``), ``scaling``, ``saturation``. Each command only
turns its options into the experiment's settings and hands them to
:func:`tutor.lab.run.run_in_terminal`: a progress bar on stderr (when it is a terminal),
tables and plots on stdout (or ``--json``, schema ``attn-tutor lab --schema``), and Ctrl-C stops
cleanly, reporting what it has (exit status 130; a second Ctrl-C aborts).

Only typer is imported at module level; numpy, numba, Rich and the engine load inside the
commands so ``attn-tutor --help`` stays fast.
"""

from __future__ import annotations

import importlib
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from tutor import terminal  # its functions looked up per call (tests replace them)
from tutor.errors import user_errors
from tutor.limits import MAX_MODEL_SIZE, MAX_SEED, MAX_SEQ_LEN, MAX_STEPS, MAX_TEST_DIGITS  # (stdlib only)

NAME = "lab"
HELP = "Train a tiny seq2seq live: bottleneck, teacher forcing, alignment, a Transformer, scaling."

app = typer.Typer(help=HELP, invoke_without_command=True)


@app.callback()
def lab(
    ctx: typer.Context,
    schema: Annotated[
        bool,
        typer.Option("--schema", help="Print the schema of every lab command's --json (Markdown) and exit."),
    ] = False,
) -> None:
    """Bare `attn-tutor lab`: the TUI's lab screen on a terminal, this help otherwise."""
    if schema:
        # deferred: keeps `attn-tutor --help` and `trace qkv --json` lean
        from tutor.render.documents import json_schema

        typer.echo(json_schema(NAME), nl=False)
        raise typer.Exit()
    if ctx.invoked_subcommand is not None:
        return

    if terminal.is_interactive():
        from tutor.app import StartAt, run_app  # deferred: loads textual (start-up time)

        run_app(StartAt("lab"))
    else:
        typer.echo(ctx.get_help())


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


SeedOpt = Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED,
                                      help="Seed for initialisation, data and sampling (0 or more).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the results as JSON (schema: attn-tutor lab "
                                                      "--schema).")]
AsciiOpt = Annotated[bool, typer.Option("--ascii", help="7-bit ASCII tables and plots, no colour.")]
# hidden knobs the tests and benchmarks use to make a run small (None: the experiment's default)
StepsOpt = Annotated[int | None, typer.Option("--steps", min=1, max=MAX_STEPS, hidden=True)]
MinLenOpt = Annotated[int | None, typer.Option("--min-len", min=1, max=MAX_SEQ_LEN, hidden=True)]
MaxLenOpt = Annotated[int | None, typer.Option("--max-len", min=1, max=MAX_SEQ_LEN, hidden=True)]
PerBucketOpt = Annotated[int | None, typer.Option("--per-bucket", min=1, max=10_000, hidden=True)]
SequentialOpt = Annotated[bool, typer.Option("--sequential", hidden=True)]

SCALING_HELP = """Time and memory of plain vs tiled attention as n doubles, with fitted exponents.

Plain attention builds the n×n weight matrix; the tiled (FlashAttention-style) kernel keeps one tile per \
thread. Both do n² work, so time grows like n² for both; memory grows like n² vs n. Times are the best of \
--repeat calls; memory is computed from the buffers each kernel allocates.
"""

SATURATION_HELP = """Why divide by √d_k: Var(q·k) = d_k, and what unscaled scores do to the softmax.

Monte Carlo variance of q·k for q, k with unit-variance components (next to the exact value d_k), and the \
softmax's entropy and largest gradient max|∂α/∂s| with and without the 1/√d_k scaling, for d_k doubling \
from --min-d to --max-d.
"""




def _run(name: str, make_settings, *, json_out: bool, ascii_only: bool | None) -> None:
    """Build the settings (a user mistake is one line, exit 2), then run in the terminal.

    ``ascii_only`` False or None: ASCII whenever there is no colour (piped, NO_COLOR,
    TERM=dumb), so every lab command writes one character set to a pipe; True: ``--ascii``.
    """
    ascii_only = ascii_only or None

    def work() -> None:
        from tutor.lab.experiments import get  # deferred: loads rich (start-up time)
        from tutor.lab.run import run_in_terminal, style_for  # deferred: loads rich (start-up time)

        style = style_for(not terminal.use_color() if ascii_only is None else ascii_only)
        run_in_terminal(get(name), make_settings(), json_out=json_out, style=style)

    user_errors(work)()


def _module(name: str):
    return importlib.import_module(f"tutor.lab.{name}")


@app.command("bottleneck", help="Fixed context vs attention on reversal, by sequence length "
                                "(Bahdanau et al. 2014, Fig. 2), trained here in about a minute.")
def bottleneck_cmd(
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    steps: StepsOpt = None,
    min_len: MinLenOpt = None,
    max_len: MaxLenOpt = None,
    per_bucket: PerBucketOpt = None,
    hidden: Annotated[int | None, typer.Option("--hidden", min=1, max=MAX_MODEL_SIZE, hidden=True)] = None,
    sequential: SequentialOpt = False,
) -> None:
    _run("bottleneck", lambda: _module("bottleneck").from_options(
        seed=seed, steps=steps, min_len=min_len, max_len=max_len, per_bucket=per_bucket,
        hidden=hidden, sequential=sequential), json_out=json_out, ascii_only=ascii_only)


@app.command("teacher-forcing", help="The same model trained with teacher-forcing ratio 1.0 "
                                     "and 0.0: loss curves side by side.")
def teacher_forcing_cmd(
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    steps: StepsOpt = None,
    max_len: MaxLenOpt = None,
    per_bucket: PerBucketOpt = None,
    sequential: SequentialOpt = False,
) -> None:
    _run("teacher-forcing", lambda: _module("teacher_forcing").from_options(
        seed=seed, steps=steps, max_len=max_len, per_bucket=per_bucket, sequential=sequential),
        json_out=json_out, ascii_only=ascii_only)


@app.command("alignment", help="What a trained attention model attends to: its weights on a "
                               "test sequence as a heatmap (reversal: the anti-diagonal).")
def alignment_cmd(
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    task: Annotated[Task, typer.Option("--task", help="What the model learns.")] = Task.reverse,
    digits: Annotated[str | None, typer.Option(
        "--digits", metavar="DIGITS", help="The test sequence, e.g. 31415926 (default: random).",
        show_default=False)] = None,
    length: Annotated[int, typer.Option("--length", min=1, max=MAX_TEST_DIGITS,
                                        help="Digits in the random test sequence.")] = 12,
    load: Annotated[Path | None, typer.Option(
        "--load", metavar="FILE", help="Use an attention model saved by `lab train --save` "
        "instead of training one.", show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", metavar="FILE", help="Also write the learned weights: .json (for `attn-tutor "
        "heatmap --from FILE`), or the drawn heatmap as .txt, .svg or .html.",
        show_default=False)] = None,
    steps: StepsOpt = None,
    max_len: MaxLenOpt = None,
) -> None:
    _run("alignment", lambda: _module("alignment").from_options(
        seed=seed, task=task.value, digits=digits, length=length, load=load, save=save,
        steps=steps, max_len=max_len), json_out=json_out, ascii_only=ascii_only)


@app.command("train", help="Train one model on a task of your choice; --save it and --load "
                           "it again (.npz with a metadata record).")
def train_cmd(
    task: Annotated[
        Task | None,
        typer.Option(
            "--task",
            help="What the model learns [default: reverse, or the loaded model's].",
            show_default=False,
        ),
    ] = None,
    cell: Annotated[
        Cell, typer.Option("--cell", help="Recurrent cell: GRU or the plain tanh RNN.")
    ] = Cell.gru,
    decoder: Annotated[
        Decoder, typer.Option("--decoder", help="Bahdanau attention or a fixed context C = H_T.")
    ] = Decoder.attention,
    bidirectional: Annotated[
        bool, typer.Option("--bidirectional/--unidirectional", help="Encoder reads both ways.")
    ] = True,
    hidden: Annotated[int, typer.Option("--hidden", min=1, max=MAX_MODEL_SIZE, help="Hidden size d_h.")] = 64,
    embed: Annotated[
        int, typer.Option("--embed", min=1, max=MAX_MODEL_SIZE, help="Embedding size d_x.")
    ] = 16,
    attn_dim: Annotated[
        int, typer.Option("--attn-dim", min=1, max=MAX_MODEL_SIZE, help="Hidden size of the additive scorer.")
    ] = 32,
    ratio: Annotated[
        float, typer.Option("--ratio", min=0.0, max=1.0, help="Teacher-forcing ratio (1 = always the truth).")
    ] = 1.0,
    steps: Annotated[
        int,
        typer.Option("--steps", min=0, max=MAX_STEPS, help="Training steps (0 with --load: just evaluate)."),
    ] = 1000,
    batch: Annotated[int, typer.Option("--batch", min=1, max=4096, help="Sequences per step.")] = 32,
    lr: Annotated[
        float,
        typer.Option(
            "--lr", min=1e-6, max=1.0, help="Adam learning rate at the start (cosine decay to a tenth of it)."
        ),
    ] = 3e-3,
    clip: Annotated[
        float, typer.Option("--clip", min=0.0, max=1e6, help="Global gradient-norm clip (0 = off).")
    ] = 5.0,
    min_len: Annotated[
        int | None,
        typer.Option(
            "--min-len",
            min=1,
            max=MAX_SEQ_LEN,
            help="Shortest training sequence [default: 5, or the loaded model's].",
            show_default=False,
        ),
    ] = None,
    max_len: Annotated[
        int | None,
        typer.Option(
            "--max-len",
            min=1,
            max=MAX_SEQ_LEN,
            help="Longest training sequence [default: 20, or the loaded model's].",
            show_default=False,
        ),
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option(
            "--save", metavar="FILE.npz", help="Write the trained weights here.", show_default=False
        ),
    ] = None,
    load: Annotated[
        Path | None,
        typer.Option(
            "--load",
            metavar="FILE.npz",
            help="Start from these weights (their sizes, cell and decoder win over the options).",
            show_default=False,
        ),
    ] = None,
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
) -> None:
    _run("train", lambda: _module("train").from_options(
        task=task.value if task else None, cell=cell.value, decoder=decoder.value,
        bidirectional=bidirectional, hidden=hidden, embed=embed, attn_dim=attn_dim, ratio=ratio,
        steps=steps, batch=batch, lr=lr, clip=clip, min_len=min_len, max_len=max_len, save=save,
        load=load, seed=seed), json_out=json_out, ascii_only=ascii_only)


TRANSFORMER_HELP = """Train a tiny Transformer live and watch its heads learn.

An encoder-decoder Transformer (self-attention, masked self-attention, cross-attention, 2 heads, 2+2 \
pre-norm layers) learns the task in about a minute; it is scored by source length on the RNN lab's held-out \
sequences, its heads are measured on one example (each with a sentence saying what it does), and the same \
model is trained without positional encodings to show what order costs. --rnn adds the fixed-context and \
attention RNNs to the same table and plot.
"""


@app.command("transformer", help=TRANSFORMER_HELP)
def transformer_cmd(
    task: Annotated[Task, typer.Option("--task", help="What the models learn [default: reverse, "
                                       "or the loaded model's].", show_default=False)] = Task.reverse,
    rnn: Annotated[bool, typer.Option("--rnn", help="Also train the RNN lab's fixed-context and "
                                      "Bahdanau attention models on the same data (one table and "
                                      "plot; about two minutes more).")] = False,
    positions_run: Annotated[bool, typer.Option(
        "--positions-experiment/--no-positions-experiment",
        help="Also train the same Transformer without positional encodings.")] = True,
    digits: Annotated[str | None, typer.Option(
        "--digits", metavar="DIGITS", help="The example the heads are shown on, e.g. 31415926 "
        "(default: 12 random digits).", show_default=False)] = None,
    save: Annotated[list[Path] | None, typer.Option(
        "--save", metavar="PATH", help="Write FILE.npz (the trained weights, for --load), "
        "FILE.txt/.svg/.html (every head drawn with its sentence) or a folder (one .json per head, "
        "for `attn-tutor heatmap --from`); may be given more than once.", show_default=False)] = None,
    load: Annotated[Path | None, typer.Option(
        "--load", metavar="FILE.npz", help="Score a Transformer saved with --save instead of "
        "training one.", show_default=False)] = None,
    dropout: Annotated[float, typer.Option(
        "--dropout", metavar="P", help="Train with dropout P (0 <= P < 1) where PyTorch's "
        "Transformer layers drop: attention weights, each sublayer's output, inside the "
        "feed-forward block. Evaluation never drops.")] = 0.0,
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    ascii_only: AsciiOpt = False,
    steps: StepsOpt = None,
    min_len: MinLenOpt = None,
    max_len: MaxLenOpt = None,
    per_bucket: PerBucketOpt = None,
    sequential: SequentialOpt = False,
) -> None:
    _run("transformer", lambda: _module("transformer").from_options(
        seed=seed, task=task.value, rnn=rnn, positions_run=positions_run, digits=digits,
        load=load, save=tuple(save or ()), steps=steps, min_len=min_len, max_len=max_len,
        per_bucket=per_bucket, sequential=sequential, dropout=dropout), json_out=json_out,
        ascii_only=ascii_only)


@app.command("scaling", help=SCALING_HELP)
def scaling_cmd(
    min_n: Annotated[int, typer.Option("--min-n", min=1, max=16384, help="Smallest sequence length.")] = 256,
    max_n: Annotated[int, typer.Option("--max-n", min=1, max=16384, help="Largest sequence length "
                                       "(n doubles from --min-n up to this).")] = 4096,
    d: Annotated[int, typer.Option("--d", min=1, max=1024, help="Head dimension d_k = d_v.")] = 64,
    repeat: Annotated[int, typer.Option("--repeat", min=1, max=100, help="Calls per kernel and n; "
                                        "the fastest counts.")] = 3,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed for Q, K, V.")] = 0,
    float64: Annotated[bool, typer.Option("--float64", help="Use float64 (default float32).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON (schema: attn-tutor lab "
                                                         "--schema).")] = False,
) -> None:
    _run("scaling", lambda: _module("scaling").from_options(
        min_n=min_n, max_n=max_n, d=d, repeat=repeat, seed=seed,
        dtype="float64" if float64 else "float32"), json_out=as_json, ascii_only=None)


@app.command("saturation", help=SATURATION_HELP)
def saturation_cmd(
    min_d: Annotated[int, typer.Option("--min-d", min=1, max=4096, help="Smallest d_k.")] = 2,
    max_d: Annotated[int, typer.Option("--max-d", min=1, max=4096, help="Largest d_k (doubling).")] = 512,
    keys: Annotated[int, typer.Option("--keys", min=2, max=1000, help="Keys per softmax.")] = 10,
    samples: Annotated[
        int, typer.Option("--samples", min=2, max=1_000_000, help="(q, k) pairs for the variance, per d_k.")
    ] = 20_000,
    trials: Annotated[
        int, typer.Option("--trials", min=1, max=100_000, help="Softmaxes averaged per d_k.")
    ] = 2_000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the random q and k.")] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the results as JSON (schema: attn-tutor lab --schema).")
    ] = False,
) -> None:
    _run("saturation", lambda: _module("saturation").from_options(
        min_d=min_d, max_d=max_d, keys=keys, samples=samples, trials=trials, seed=seed),
        json_out=as_json, ascii_only=None)
