"""The lab's files: trained weights (``.npz`` with a JSON record; seq2seq or Transformer) and
learned attention (``.json`` for ``attn-tutor heatmap --from``, or a drawn
``.txt``/``.svg``/``.html``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor.errors import UserError
from tutor.limits import MAX_LAYERS, MAX_MODEL_SIZE, MAX_SEQ_LEN  # (stdlib only)

WEIGHTS_FORMAT = "attn-tutor-seq2seq"
TRANSFORMER_FORMAT = "attn-tutor-transformer"
WEIGHTS_VERSION = 1
HEATMAP_SUFFIXES = (".json", ".txt", ".svg", ".html")
MAX_ARRAYS = 1024
"""Arrays in one weights file (a Transformer at 16 layers a side holds about 500)."""


def save_model(path: Path, model: Any, meta: dict[str, Any], fmt: str = WEIGHTS_FORMAT) -> None:
    """Write ``model`` to an ``.npz``: one array per parameter plus a JSON record
    (format — :data:`WEIGHTS_FORMAT` for a seq2seq, :data:`TRANSFORMER_FORMAT` for a
    Transformer —, version, config, and ``meta``, e.g. the task and training settings)."""
    import numpy as np

    record = {"format": fmt, "version": WEIGHTS_VERSION,
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


def _read_weights(path: Path, fmt: str, kind: str, how: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(record, arrays) of a file :func:`save_model` wrote in format ``fmt``; ``kind`` names
    the model in messages, ``how`` the command that saves one.

    Sizes are checked before anything is decompressed: the file, the sum of its members, and
    each array's declared shape against the bytes its member holds (:mod:`tutor.limits`).

    Raises:
        UserError: one line saying why the file cannot be used.
    """
    import zipfile

    import numpy as np

    from tutor.limits import MAX_WEIGHTS_FILE, check_file_size, shorten

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such weights file")
    check_file_size(path, MAX_WEIGHTS_FILE, str(path))
    if not zipfile.is_zipfile(path):
        raise UserError(f"{path}: not an .npz weights file; save one with `{how}`")
    _check_members(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__record__" not in data.files:
                raise UserError(f"{path}: not an attn-tutor weights file (no record); save one with "
                                f"`{how}`")
            record = json.loads(str(data["__record__"]))
            arrays = {k.split("/", 1)[1]: data[k] for k in data.files if k.startswith("param/")}
    except UserError:
        raise
    except (OSError, ValueError, EOFError, RecursionError, zipfile.BadZipFile,
            json.JSONDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: not a readable .npz weights file ({reason[:100]})") from None
    if not isinstance(record, dict) or record.get("format") != fmt:
        other = record.get("format") if isinstance(record, dict) else None
        extra = f" (it holds {other.removeprefix('attn-tutor-')[:40]} weights)" if isinstance(other, str) else ""
        raise UserError(f"{path}: not an attn-tutor {kind} weights file{extra}")
    if record.get("version") != WEIGHTS_VERSION:
        raise UserError(f"{path}: weights format version {shorten(record.get('version'))}; this "
                        f"attn-tutor reads version {WEIGHTS_VERSION}")
    return record, arrays


def load_model(path: Path, *, decoder: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Read a seq2seq file written by :func:`save_model`; returns (model, record).

    Raises:
        UserError: one line saying why the file cannot be used (missing, too big, not an
            attn-tutor weights file, wrong version, a record field of the wrong type or range,
            arrays of the wrong shape for the recorded config, or not the ``decoder`` kind
            asked for).
    """
    from engine.seq2seq import Seq2Seq, Seq2SeqConfig

    record, arrays = _read_weights(path, WEIGHTS_FORMAT, "seq2seq",
                                   "attn-tutor lab train --save FILE.npz")
    check_record(record, path, SEQ2SEQ_SIZES)
    model = _rebuild(path, record, arrays, Seq2SeqConfig, Seq2Seq)
    config = model.config
    if decoder is not None and config.decoder != decoder:
        raise UserError(f"{path}: holds a model with a {config.decoder} decoder; this needs one "
                        f"with an {decoder} decoder")
    return model, record


def load_transformer(path: Path) -> tuple[Any, dict[str, Any]]:
    """Read a Transformer written by ``attn-tutor lab transformer --save FILE.npz``.

    Raises:
        UserError: as :func:`load_model`.
    """
    from engine.transformer import Transformer, TransformerConfig

    record, arrays = _read_weights(path, TRANSFORMER_FORMAT, "Transformer",
                                   "attn-tutor lab transformer --save FILE.npz")
    check_record(record, path, TRANSFORMER_SIZES)
    return _rebuild(path, record, arrays, TransformerConfig, Transformer), record


def _rebuild(path: Path, record: dict[str, Any], arrays: dict[str, Any], config_type: Any,
             model_type: Any) -> Any:
    """The model a record's config and arrays describe (a bad config or shape: one line)."""
    try:
        config = config_type(**record["config"])
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"{path}: the recorded model config is invalid ({str(exc)[:100]})") from None
    try:
        return model_type.from_arrays(config, arrays)
    except ValueError as exc:
        raise UserError(f"{path}: wrong shape for the recorded model: {exc}") from None


def _check_members(path: Path) -> None:
    """The zip's members decompress to at most ``MAX_WEIGHTS_FILE`` bytes in all, and each
    array's header declares no more data than its member holds."""
    import zipfile

    from tutor.heatmap.load import read_npy_header
    from tutor.limits import MAX_WEIGHTS_FILE, size_text

    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            total = sum(m.file_size for m in members)
            if total > MAX_WEIGHTS_FILE or len(members) > MAX_ARRAYS:
                raise UserError(f"{path}: its {len(members)} arrays decompress to "
                                f"{size_text(total)}; expected at most {size_text(MAX_WEIGHTS_FILE)} "
                                f"(and {MAX_ARRAYS} arrays)")
            for m in members:
                with zf.open(m) as fh:
                    shape, dtype = read_npy_header(fh, f"{path} ({m.filename})")
                declared = dtype.itemsize
                for n in shape:
                    declared *= n
                if declared > m.file_size:
                    raise UserError(f"{path}: {m.filename} declares {size_text(declared)} of data "
                                    f"but holds {size_text(m.file_size)}; the file is damaged")
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise UserError(f"{path}: not a readable .npz weights file ({str(exc)[:100]})") from None


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
    from engine.lab import TASKS
    from tutor.limits import MAX_RECORDED_STEPS, MAX_SEED, check_whole, shorten

    where = f"{path}: record field"
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
        raise UserError(f"--save {path}: unknown file type {shown}; expected .json, .txt, .svg or .html")


def save_heatmap(path: Path, title: str, weights: Any, rows: list[str], cols: list[str],
                 drawn: Callable[[], list]) -> None:
    """Write attention weights: ``.json`` in the format ``attn-tutor heatmap --from`` reads, or
    the drawn heatmap (``drawn()``: its Rich renderables) as ``.txt`` / ``.svg`` / ``.html``."""
    if path.suffix.lower() == ".json":
        data = {"title": title, "rows": list(rows), "cols": list(cols),
                "weights": [[float(x) for x in row] for row in weights]}
        try:
            path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--save {path}: could not write it ({exc.strerror or exc})") from None
        return
    from tutor.heatmap import HeatmapOptions, heatmap_text
    from tutor.heatmap.export import export

    plain = heatmap_text(weights, rows, cols, title, HeatmapOptions(width=100, color=False))
    export(path, plain, drawn, width=100, title=title)
