"""The lab's files: trained weights (``.npz`` with a JSON record) and learned attention
(``.json`` for ``attn-tutor heatmap --from``, or a drawn ``.txt``/``.svg``/``.html``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor.errors import UserError

WEIGHTS_FORMAT = "attn-tutor-seq2seq"
WEIGHTS_VERSION = 1
HEATMAP_SUFFIXES = (".json", ".txt", ".svg", ".html")


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
