"""The tiled attention's tile sizes, calibrated once per machine and kept in the cache folder.

The engine measures (``engine.flash.calibrate_blocks``) and applies (``set_blocks``) but does
no I/O; this module is the small tutor-side part: one JSON file in
``platformdirs.user_cache_path("attn-tutor")`` (under ``$ATTN_TUTOR_HOME/cache`` when that is
set, as in the tests), keyed by CPU model, thread count and numba version, so a new machine,
a different ``NUMBA_NUM_THREADS`` or a numba upgrade calibrates again.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

import platformdirs

from tutor import atomic

FILE_NAME = "flash-blocks.json"


def cache_path() -> Path:
    """Where the calibration is kept (not created here)."""
    env = os.environ.get("ATTN_TUTOR_HOME")
    if env:
        return Path(env).expanduser() / "cache" / FILE_NAME

    return platformdirs.user_cache_path("attn-tutor") / FILE_NAME


def machine_key() -> str:
    """CPU model, threads the kernel uses, numba version: what the best tile depends on."""
    from engine._jit import version  # deferred: loads the engine's kernels (start-up time)
    from engine.flash import get_threads  # deferred: loads numba (start-up time)

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")),
                         model)
    except OSError:
        pass
    return f"{model} | {get_threads()} thread(s) | numba {version()}"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def use_calibrated_blocks(*, calibrate: bool = True) -> dict[str, Any] | None:
    """Apply this machine's saved tile sizes; without one, calibrate (~1–2 s) and save it.

    Returns the entry applied (``best``, ``seconds``, ``n``, ``dtype``, ``threads``,
    ``calibrated``: True when it was measured just now), or None when nothing was saved and
    ``calibrate`` is False. A damaged or foreign file is ignored (and replaced when
    calibrating); a cache folder that cannot be written only means calibrating next time.
    """
    from engine.flash import calibrate_blocks, set_blocks  # deferred: loads numba (start-up time)

    path = cache_path()
    key = machine_key()
    saved = _read(path)
    entry = saved.get(key)
    if (isinstance(entry, dict) and isinstance(entry.get("best"), list)
            and len(entry["best"]) in (2, 4)
            and all(isinstance(b, int) and b > 0 for b in entry["best"])):
        set_blocks(*entry["best"])
        return {**entry, "calibrated": False}
    if not calibrate:
        return None
    entry = calibrate_blocks()
    entry["best"] = list(entry["best"])
    set_blocks(*entry["best"])
    saved[key] = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, json.dumps(saved, indent=2))
    except OSError:
        pass
    return {**entry, "calibrated": True}
