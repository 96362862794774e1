"""The lab's files: trained weights (``.npz`` with a JSON record; seq2seq or Transformer) and
learned attention (``.json`` for ``attn-tutor heatmap --from``, or a drawn
``.txt``/``.svg``/``.html``)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor import atomic
from tutor.errors import UserError
from tutor.limits import (  # (stdlib only)
    MAX_LAYERS,
    MAX_MODEL_SIZE,
    MAX_PARAMETERS,
    MAX_RECORDED_STEPS,
    MAX_SEED,
    MAX_SEQ_LEN,
    MAX_WEIGHTS_FILE,
    check_file_size,
    check_whole,
    shorten,
    size_text,
)
from tutor.render.safe import shown_path

WEIGHTS_FORMAT = "attn-tutor-seq2seq"
TRANSFORMER_FORMAT = "attn-tutor-transformer"
WEIGHTS_VERSION = 1
HEATMAP_SUFFIXES = (".json", ".txt", ".svg", ".html")
MAX_ARRAYS = 1024
"""Arrays in one weights file (a Transformer at 16 layers a side holds about 500)."""
MAX_RECORD = 1 << 16
"""Characters in a weights file's JSON record (what the lab writes is well under 2,000)."""


def save_model(path: Path, model: Any, meta: dict[str, Any], fmt: str = WEIGHTS_FORMAT) -> None:
    """Write ``model`` to an ``.npz``: one array per parameter plus a JSON record
    (format — :data:`WEIGHTS_FORMAT` for a seq2seq, :data:`TRANSFORMER_FORMAT` for a
    Transformer —, version, config, and ``meta``, e.g. the task and training settings)."""
    import numpy as np  # deferred: loads numpy (start-up time)

    record = {"format": fmt, "version": WEIGHTS_VERSION,
              "config": model.config.to_dict(), **meta}
    arrays = {f"param/{k}": v for k, v in model.to_arrays().items()}
    path = Path(path)
    if path.suffix != ".npz":
        raise UserError(f"{shown_path(path)}: the weights file must end in .npz")
    try:
        with atomic.replacing(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, __record__=np.array(json.dumps(record)), **arrays)
    except OSError as exc:
        raise UserError(f"{shown_path(path)}: cannot write the weights ({exc.strerror or exc})") from None


def _read_weights(path: Path, fmt: str, kind: str, how: str, sizes: dict[str, tuple[int, int]],
                  config_type: Any) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """(record, config, arrays) of a file :func:`save_model` wrote in format ``fmt``; ``kind``
    names the model in messages, ``how`` the command that saves one.

    The work is bounded before anything big is read: the file's size, its members' count and
    decompressed sizes, then the record alone (a small member), its fields and the model it
    describes — whose parameters must number at most ``MAX_PARAMETERS[kind]`` — and then each
    array's declared shape against the one that model expects (:func:`_check_arrays`). Only
    then are the arrays decompressed.

    Raises:
        UserError: one line saying why the file cannot be used.
    """
    import numpy as np  # deferred: loads numpy (start-up time)

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{shown_path(path)}: no such weights file")
    check_file_size(path, MAX_WEIGHTS_FILE, shown_path(path))
    if not zipfile.is_zipfile(path):
        raise UserError(f"{shown_path(path)}: not an .npz weights file; save one with `{how}`")
    headers = _check_members(path)
    record_header = headers.pop("__record__", None)
    if record_header is None:
        raise UserError(f"{shown_path(path)}: not an attn-tutor weights file (no record); save one "
                        f"with `{how}`")
    shape, dtype = record_header
    if shape != () or dtype.kind != "U" or dtype.itemsize > 4 * MAX_RECORD:  # 4 bytes a character
        raise UserError(f"{shown_path(path)}: its record is not the short text attn-tutor writes")
    try:
        with np.load(path, allow_pickle=False) as data:
            record = json.loads(str(data["__record__"]))
            _check_record_head(record, path, fmt, kind)
            check_record(record, path, sizes)
            config = _config(path, record, config_type)
            _check_arrays(path, headers, config, kind)
            arrays = {name: data[f"param/{name}"] for name in config.shapes()}
    except UserError:
        raise
    except (OSError, ValueError, EOFError, RecursionError, zipfile.BadZipFile,
            json.JSONDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{shown_path(path)}: not a readable .npz weights file "
                        f"({reason[:100]})") from None
    return record, config, arrays


def _check_record_head(record: Any, path: Path, fmt: str, kind: str) -> None:
    if not isinstance(record, dict) or record.get("format") != fmt:
        other = record.get("format") if isinstance(record, dict) else None
        extra = (f" (it holds {other.removeprefix('attn-tutor-')[:40]} weights)"
                 if isinstance(other, str) else "")
        raise UserError(f"{shown_path(path)}: not an attn-tutor {kind} weights file{extra}")
    if record.get("version") != WEIGHTS_VERSION:
        raise UserError(f"{shown_path(path)}: weights format version "
                        f"{shorten(record.get('version'))}; this attn-tutor reads version "
                        f"{WEIGHTS_VERSION}")


def _config(path: Path, record: dict[str, Any], config_type: Any) -> Any:
    """The model config the record describes (sizes only: no array is built)."""
    try:
        return config_type(**record["config"])
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"{shown_path(path)}: the recorded model config is invalid "
                        f"({str(exc)[:100]})") from None


def _check_arrays(path: Path, headers: dict[str, tuple[tuple[int, ...], Any]], config: Any,
                  kind: str) -> None:
    """The model is small enough to run, and the file holds exactly its arrays, each with the
    shape it expects (read from the arrays' headers: nothing is decompressed yet)."""
    shapes = config.shapes()
    n = sum(_product(shape) for shape in shapes.values())
    if n > MAX_PARAMETERS[kind]:
        raise UserError(f"{shown_path(path)}: the recorded {kind} has {n:,} parameters; this "
                        f"tutor runs at most {MAX_PARAMETERS[kind]:,} (the lab's own models are "
                        "far smaller)")
    for member in headers:
        if member.removeprefix("param/") not in shapes or not member.startswith("param/"):
            raise UserError(f"{shown_path(path)}: holds an array {member[:40]!r} that the "
                            f"recorded {kind} does not have; the file is not one attn-tutor wrote")
    for name, want in shapes.items():  # in storage order, as the engine checks them
        if f"param/{name}" not in headers:
            raise UserError(f"{shown_path(path)}: wrong shape for the recorded model: {name}: "
                            "missing from the saved weights")
        shape, dtype = headers[f"param/{name}"]
        if tuple(shape) != tuple(want):
            raise UserError(f"{shown_path(path)}: wrong shape for the recorded model: {name}: "
                            f"expected shape {tuple(want)} for {_sizes(config)}, got shape "
                            f"{tuple(shape)}")
        if dtype.kind != "f":
            raise UserError(f"{shown_path(path)}: {name}: holds {dtype} values; expected "
                            "floating-point weights")


def _sizes(config: Any) -> str:
    """The sizes that decide a model's shapes, for a message."""
    if hasattr(config, "hidden_dim"):
        return (f"a {config.cell}/{config.decoder} model with hidden size {config.hidden_dim}, "
                f"embedding {config.embed_dim}, V = {config.vocab_size}")
    return f"d_model = {config.d_model}, d_ff = {config.d_ff}, V = {config.vocab_size}"


def _product(shape: tuple[int, ...]) -> int:
    n = 1
    for side in shape:
        n *= side
    return n


def load_model(path: Path, *, decoder: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Read a seq2seq file written by :func:`save_model`; returns (model, record).

    Raises:
        UserError: one line saying why the file cannot be used (missing, too big, not an
            attn-tutor weights file, wrong version, a record field of the wrong type or range,
            more parameters than the tutor runs, arrays of the wrong shape for the recorded
            config, or not the ``decoder`` kind asked for).
    """
    from engine.seq2seq import Seq2Seq, Seq2SeqConfig  # deferred: loads numba (start-up time)

    record, config, arrays = _read_weights(path, WEIGHTS_FORMAT, "seq2seq",
                                           "attn-tutor lab train --save FILE.npz",
                                           SEQ2SEQ_SIZES, Seq2SeqConfig)
    model = _build(path, config, arrays, Seq2Seq)
    if decoder is not None and config.decoder != decoder:
        raise UserError(f"{shown_path(path)}: holds a model with a {config.decoder} decoder; "
                        f"this needs one with an {decoder} decoder")
    return model, record


def load_transformer(path: Path) -> tuple[Any, dict[str, Any]]:
    """Read a Transformer written by ``attn-tutor lab transformer --save FILE.npz``.

    Raises:
        UserError: as :func:`load_model`.
    """
    from engine.transformer import Transformer, TransformerConfig  # deferred: loads numba (start-up time)

    record, config, arrays = _read_weights(path, TRANSFORMER_FORMAT, "Transformer",
                                           "attn-tutor lab transformer --save FILE.npz",
                                           TRANSFORMER_SIZES, TransformerConfig)
    return _build(path, config, arrays, Transformer), record


def _build(path: Path, config: Any, arrays: dict[str, Any], model_type: Any) -> Any:
    """The model from its checked config and arrays (a bad value: one line)."""
    try:
        return model_type.from_arrays(config, arrays)
    except ValueError as exc:
        raise UserError(f"{shown_path(path)}: wrong shape for the recorded model: {exc}") from None


def _check_members(path: Path) -> dict[str, tuple[tuple[int, ...], Any]]:
    """``{array name: (shape, dtype)}`` read from the headers, once the zip's members are at
    most :data:`MAX_ARRAYS` and decompress to at most ``MAX_WEIGHTS_FILE`` bytes in all, and
    each array's header declares no more data than its member holds."""
    from tutor.heatmap.load import read_npy_header  # deferred: loads numpy, rich (start-up time)

    headers: dict[str, tuple[tuple[int, ...], Any]] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            total = sum(m.file_size for m in members)
            if total > MAX_WEIGHTS_FILE or len(members) > MAX_ARRAYS:
                raise UserError(f"{shown_path(path)}: its {len(members)} arrays decompress to "
                                f"{size_text(total)}; expected at most "
                                f"{size_text(MAX_WEIGHTS_FILE)} (and {MAX_ARRAYS} arrays)")
            for m in members:
                name = m.filename.removesuffix(".npy")
                with zf.open(m) as fh:
                    shape, dtype = read_npy_header(fh, f"{shown_path(path)} ({name[:40]})")
                declared = dtype.itemsize * _product(shape)
                if declared > m.file_size:
                    raise UserError(f"{shown_path(path)}: {name[:40]} declares "
                                    f"{size_text(declared)} of data but holds "
                                    f"{size_text(m.file_size)}; the file is damaged")
                headers[name] = (shape, dtype)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise UserError(f"{shown_path(path)}: not a readable .npz weights file "
                        f"({str(exc)[:100]})") from None
    return headers


SEQ2SEQ_SIZES = {"embed_dim": (1, MAX_MODEL_SIZE), "hidden_dim": (1, MAX_MODEL_SIZE),
                 "attn_dim": (1, MAX_MODEL_SIZE), "vocab_size": (4, 1000)}
"""A seq2seq record's config sizes and their ranges (checked before any array is built)."""
TRANSFORMER_SIZES = {"d_model": (1, MAX_MODEL_SIZE), "num_heads": (1, MAX_MODEL_SIZE),
                     "d_ff": (1, 4 * MAX_MODEL_SIZE), "num_encoder_layers": (1, MAX_LAYERS),
                     "num_decoder_layers": (1, MAX_LAYERS), "max_len": (1, MAX_SEQ_LEN + 2),
                     "vocab_size": (2, 1000)}
"""The same for a Transformer (``max_len`` sizes its position table: a sequence plus BOS/EOS)."""


def check_record(record: dict[str, Any], path: Path,
                 sizes: dict[str, tuple[int, int]] = SEQ2SEQ_SIZES) -> None:
    """Every field a weights record may hold has the right type and range (a missing one
    takes its default): the config's ``sizes``, the task, the lengths, steps, seed and ratio.

    Raises:
        UserError: ``PATH: record field NAME: is …; expected …`` (limits in :mod:`tutor.limits`).
    """
    from engine.lab import TASKS  # deferred: loads numba (start-up time)

    where = f"{shown_path(path)}: record field"
    config = record.get("config")
    if not isinstance(config, dict):
        raise UserError(f"{where} config: expected an object with the model's sizes")
    for key, (low, high) in sizes.items():
        if key in config:
            check_whole(config[key], f"{where} config.{key}", low, high)
    task = record.get("task")
    if task is not None and task not in TASKS:
        raise UserError(f"{where} task: is {shorten(task)}; expected one of {', '.join(TASKS)}")
    lengths = {}
    for key in ("min_len", "max_len"):
        if key in record:
            lengths[key] = check_whole(record[key], f"{where} {key}", 1, MAX_SEQ_LEN)
    if len(lengths) == 2 and lengths["min_len"] > lengths["max_len"]:
        raise UserError(f"{where} min_len: {lengths['min_len']} is more than max_len "
                        f"{lengths['max_len']}")
    if "steps" in record:
        check_whole(record["steps"], f"{where} steps", 0, MAX_RECORDED_STEPS)
    if "seed" in record:
        check_whole(record["seed"], f"{where} seed", 0, MAX_SEED)
    if "teacher_forcing_ratio" in record:
        ratio = record["teacher_forcing_ratio"]
        ok = isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and 0 <= ratio <= 1
        if not ok:
            raise UserError(f"{where} teacher_forcing_ratio: is {shorten(ratio)}; expected a "
                            "number from 0 to 1")


def check_heatmap_path(path: Path) -> None:
    """Fail before any training when ``--save`` names a file type the heatmap cannot be."""
    if path.suffix.lower() not in HEATMAP_SUFFIXES:
        shown = repr(path.suffix) if path.suffix else "no extension"
        raise UserError(f"--save {shown_path(path)}: unknown file type {shown}; expected .json, .txt, .svg "
                        "or .html")


def save_heatmap(path: Path, title: str, weights: Any, rows: list[str], cols: list[str],
                 drawn: Callable[[], list]) -> None:
    """Write attention weights: ``.json`` in the format ``attn-tutor heatmap --from`` reads, or
    the drawn heatmap (``drawn()``: its Rich renderables) as ``.txt`` / ``.svg`` / ``.html``."""
    if path.suffix.lower() == ".json":
        data = {"title": title, "rows": list(rows), "cols": list(cols),
                "weights": [[float(x) for x in row] for row in weights]}
        try:
            atomic.write_text(path, json.dumps(data, indent=1) + "\n")
        except OSError as exc:
            raise UserError(f"--save {shown_path(path)}: could not write it "
                            f"({exc.strerror or exc})") from None
        return
    from tutor.heatmap import HeatmapOptions, heatmap_text  # deferred: loads numpy, rich (start-up time)
    from tutor.heatmap.export import export  # deferred: loads numpy, rich (start-up time)

    plain = heatmap_text(weights, rows, cols, title, HeatmapOptions(width=100, color=False))
    export(path, plain, drawn, width=100, title=title)
