"""Where progress lives: ``$ATTN_TUTOR_HOME`` or the platform's user data folder."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """The data folder (not created here); tests always point ``ATTN_TUTOR_HOME`` at a temp dir."""
    env = os.environ.get("ATTN_TUTOR_HOME")
    if env:
        return Path(env).expanduser()

    return platformdirs.user_data_path("attn-tutor")
