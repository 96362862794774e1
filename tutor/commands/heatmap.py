"""`attn-tutor heatmap`: attention weights as a heatmap, from a trace or from a file.

Only typer is imported at module level; numpy, Rich, the engine and the renderer load inside
the command, so ``attn-tutor --help`` stays fast.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from tutor.errors import UserError, user_errors
from tutor.limits import MAX_TITLE
from tutor.names import resolve

if TYPE_CHECKING:
    from tutor.heatmap.model import Scale  # numpy: not for `attn-tutor --help`

NAME = "heatmap"
HELP = ("Draw attention weights as a heatmap: rows are output (query) tokens, columns input "
        "(key) tokens. From a trace (NAME, --set, --file) or a file (--from weights.csv).")


class ScaleChoice(str, Enum):
    matrix = "matrix"
    row = "row"


def command(
    name: Annotated[str | None, typer.Argument(
        help="A trace with heatmaps (omit it, and --from, to list them).", show_default=False)] = None,
    sets: Annotated[list[str] | None, typer.Option(
        "--set", metavar="NAME=VALUE", help="Override a trace input, as for `trace`. Repeatable.",
        show_default=False)] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", "-f", help="Trace inputs from a TOML file of NAME = value lines, as for `trace`.",
        show_default=False)] = None,
    index: Annotated[int | None, typer.Option(
        "--index", "-i", help="Draw only the trace's N-th heatmap (1 = first); default: all.",
        show_default=False)] = None,
    source: Annotated[Path | None, typer.Option(
        "--from", metavar="FILE",
        help="Weights from a file: .csv/.tsv (optional header row and label column), .npy (2-D), "
             "or .json ([[...]] or {\"weights\": [[...]], \"rows\": [...], \"cols\": [...]}).",
        show_default=False)] = None,
    rows: Annotated[str | None, typer.Option(
        "--rows", metavar="WORDS", help="Row (output/query) labels, e.g. \"j' ai mal au pieds\".",
        show_default=False)] = None,
    cols: Annotated[str | None, typer.Option(
        "--cols", metavar="WORDS", help="Column (input/key) labels, e.g. \"my feet hurt\".",
        show_default=False)] = None,
    rows_file: Annotated[Path | None, typer.Option(
        "--rows-file", metavar="FILE", help="Row labels, one per line.", show_default=False)] = None,
    cols_file: Annotated[Path | None, typer.Option(
        "--cols-file", metavar="FILE", help="Column labels, one per line.", show_default=False)] = None,
    title: Annotated[str | None, typer.Option(
        "--title", help="Title above the grid (default: the trace's, or the file name).",
        show_default=False)] = None,
    values: Annotated[bool, typer.Option(
        "--values", help="Print each cell's value next to its shade.")] = False,
    scale: Annotated[ScaleChoice, typer.Option(
        "--scale", help="Shade against the whole matrix or each row on its own.")] = ScaleChoice.matrix,
    ascii_only: Annotated[bool, typer.Option(
        "--ascii", help="No colour, 7-bit ASCII only (the shade ramp ' .:-=+*#%@').")] = False,
    width: Annotated[int | None, typer.Option(
        "--width", "-w", min=20, max=1000, help="Columns to fit (default: the terminal's). Wider matrices "
        "are split into pages of columns.", show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", metavar="FILE", help="Also write the heatmap to FILE: .txt, .svg or .html.",
        show_default=False)] = None,
) -> None:
    user_errors(run)(
        name, sets=sets, file=file, index=index, source=source, rows=rows, cols=cols,
        rows_file=rows_file, cols_file=cols_file, title=title, values=values,
        scale=cast("Scale", scale.value), ascii_only=ascii_only, width=width, save=save,
    )


def run(
    name: str | None, *, sets: list[str] | None = None, file: Path | None = None,
    index: int | None = None, source: Path | None = None, rows: str | None = None,
    cols: str | None = None, rows_file: Path | None = None, cols_file: Path | None = None,
    title: str | None = None, values: bool = False, scale: Scale = "matrix",
    ascii_only: bool = False, width: int | None = None, save: Path | None = None,
) -> None:
    """The command's work as a plain function (the CLI wraps it in the one-line error handler)."""
    from tutor.heatmap.export import save_format  # deferred: loads numpy, rich (start-up time)
    from tutor.render.safe import shown_path  # deferred: loads rich (start-up time)

    if save is not None:
        save_format(save)  # an unknown extension fails before any work

    if title is not None and len(title) > MAX_TITLE:
        raise UserError(f"--title: {len(title)} characters; expected at most {MAX_TITLE}")
    label_flags = [f for f, v in (("--rows", rows), ("--cols", cols), ("--rows-file", rows_file),
                                  ("--cols-file", cols_file)) if v is not None]
    if name is not None and source is not None:
        raise UserError(f"give a trace name or --from FILE, not both (got {name[:40]!r} and "
                        f"--from {shown_path(source)})")
    if source is None and label_flags:
        raise UserError(f"{label_flags[0]} labels a file's matrix; use it with --from FILE")
    if name is None and (sets or file or index is not None):
        raise UserError(
            "name a trace to use --set, --file or --index (run `attn-tutor heatmap` to list them)"
        )
    if rows is not None and rows_file is not None:
        raise UserError("give --rows or --rows-file, not both")
    if cols is not None and cols_file is not None:
        raise UserError("give --cols or --cols-file, not both")

    from tutor.heatmap.show import listing, show  # deferred: loads numpy, rich (start-up time)

    if name is None and source is None:
        typer.echo(listing(ascii_only), nl=False)
        return

    maps, errata = (_from_file(source, rows, cols, rows_file, cols_file, title) if source is not None
                    else _from_trace(name, sets, file, index, title, ascii_only))
    show(maps, errata, values=values, scale=scale, ascii_only=ascii_only, width=width, save=save)


# --------------------------------------------------------------------------- sources

def _from_file(source, rows, cols, rows_file, cols_file, title):
    # deferred: loads numpy, rich (start-up time)
    from tutor.heatmap.load import check_labels, load_labels, load_matrix, split_labels
    from tutor.render.safe import shown_path  # deferred: loads rich (start-up time)

    loaded = load_matrix(source, where=f"--from {shown_path(source)}")
    n_rows, n_cols = loaded.weights.shape
    row_labels = (split_labels(rows) if rows is not None
                  else load_labels(rows_file, f"--rows-file {shown_path(rows_file)}") if rows_file is not None
                  else loaded.rows)
    col_labels = (split_labels(cols) if cols is not None
                  else load_labels(cols_file, f"--cols-file {shown_path(cols_file)}") if cols_file is not None
                  else loaded.cols)
    flag_r = (
        "--rows"
        if rows is not None
        else f"--rows-file {shown_path(rows_file)}"
        if rows_file
        else f"--from {shown_path(source)} (its row labels)"
    )
    flag_c = (
        "--cols"
        if cols is not None
        else f"--cols-file {shown_path(cols_file)}"
        if cols_file
        else f"--from {shown_path(source)} (its column labels)"
    )
    if row_labels is not None:
        check_labels(row_labels, n_rows, flag_r, "rows")
    if col_labels is not None:
        check_labels(col_labels, n_cols, flag_c, "columns")
    heading = title if title is not None else (loaded.title or Path(source).name)
    return [(loaded.weights, row_labels, col_labels, heading, "auto")], []


def _from_trace(name, sets, file, index, title, ascii_only):
    from engine.traces import build, get_info, list_traces  # deferred: loads numpy (start-up time)
    from tutor.inputs import gather_inputs  # deferred: loads rich (start-up time)

    name = resolve(name, [t.name for t in list_traces()], "trace",
                   "Run `attn-tutor heatmap` to list the ones that draw heatmaps.")
    info = get_info(name)
    overrides = gather_inputs(sets, file)
    try:
        trace = build(name, overrides)
    except ModuleNotFoundError as exc:  # a registry row whose builder module is missing
        if exc.name != info.module:
            raise
        raise UserError(f"trace {name!r} is not available yet; run `attn-tutor heatmap` to list "
                        "the traces that draw heatmaps") from None
    if not trace.heatmaps:
        raise UserError(f"trace {name!r} draws no heatmap; run `attn-tutor heatmap` to list the ones that do")
    chosen = list(enumerate(trace.heatmaps, 1))
    if index is not None:
        if not 1 <= index <= len(chosen):
            raise UserError(f"--index {index}: trace {name} has {len(chosen)} heatmap"
                            f"{'s' if len(chosen) > 1 else ''}; expected a number from 1 to {len(chosen)}")
        chosen = [chosen[index - 1]]
    many = len(trace.heatmaps) > 1
    maps = []
    for k, h in chosen:
        heading = title if title is not None else f"{trace.title}: {h.title}"
        if many and title is None:
            heading = f"{heading} ({k} of {len(trace.heatmaps)})"
        maps.append((h.weights, h.row_labels, h.col_labels, heading, h.kind))
    return maps, trace.errata
