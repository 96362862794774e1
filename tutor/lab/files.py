"""The lab's files: trained weights (``.npz`` with a JSON record; seq2seq or Transformer) and
learned attention (``.json`` for ``attn-tutor heatmap --from``, or a drawn
``.txt``/``.svg``/``.html``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor.errors import UserError

WEIGHTS_FORMAT = "attn-tutor-seq2seq"
TRANSFORMER_FORMAT = "attn-tutor-transformer"
WEIGHTS_VERSION = 1
HEATMAP_SUFFIXES = (".json", ".txt", ".svg", ".html")


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

    Raises:
        UserError: one line saying why the file cannot be used.
    """
    import zipfile

    import numpy as np

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such weights file")
    if not zipfile.is_zipfile(path):
        raise UserError(f"{path}: not an .npz weights file; save one with `{how}`")
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__record__" not in data.files:
                raise UserError(f"{path}: not an attn-tutor weights file (no record); save one with "
                                f"`{how}`")
            record = json.loads(str(data["__record__"]))
            arrays = {k.split("/", 1)[1]: data[k] for k in data.files if k.startswith("param/")}
    except UserError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable .npz weights file ({str(exc).splitlines()[0]})") from None
    if not isinstance(record, dict) or record.get("format") != fmt:
        other = record.get("format") if isinstance(record, dict) else None
        extra = f" (it holds {other.removeprefix('attn-tutor-')} weights)" if isinstance(other, str) else ""
        raise UserError(f"{path}: not an attn-tutor {kind} weights file{extra}")
    if record.get("version") != WEIGHTS_VERSION:
        raise UserError(f"{path}: weights format version {record.get('version')!r}; this attn-tutor "
                        f"reads version {WEIGHTS_VERSION}")
    return record, arrays


def load_model(path: Path, *, decoder: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Read a seq2seq file written by :func:`save_model`; returns (model, record).

    Raises:
        UserError: one line saying why the file cannot be used (missing, not an attn-tutor
            weights file, wrong version, arrays of the wrong shape for the recorded config,
            or not the ``decoder`` kind asked for).
    """
    from engine.seq2seq import Seq2Seq, Seq2SeqConfig

    record, arrays = _read_weights(path, WEIGHTS_FORMAT, "seq2seq",
                                   "attn-tutor lab train --save FILE.npz")
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
    return _rebuild(path, record, arrays, TransformerConfig, Transformer), record


def _rebuild(path: Path, record: dict[str, Any], arrays: dict[str, Any], config_type: Any,
             model_type: Any) -> Any:
    """The model a record's config and arrays describe (a bad config or shape: one line)."""
    try:
        config = config_type(**record["config"])
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"{path}: the recorded model config is invalid ({exc})") from None
    try:
        return model_type.from_arrays(config, arrays)
    except ValueError as exc:
        raise UserError(f"{path}: wrong shape for the recorded model: {exc}") from None


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
