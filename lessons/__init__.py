"""The tutor's reading material as data (Markdown + TOML); see tutor/content for the loader."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent
