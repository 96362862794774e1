"""attn-tutor's math engine: numba kernels behind validated public functions.

Nothing here imports the UI (textual, rich, typer) or does I/O. Submodules are imported on
first use so ``import engine`` stays cheap; import from the concept module directly
(``from engine.softmax import softmax``) or use the names re-exported here lazily.
"""

from __future__ import annotations

import importlib

# public name -> defining module; filled in as modules land
_EXPORTS: dict[str, str] = {
    "softmax": "engine.softmax",
    "log_softmax": "engine.softmax",
    "masked_softmax": "engine.softmax",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = sorted(_EXPORTS)
