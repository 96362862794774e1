"""attn-tutor: the terminal tutor (CLI, Textual TUI, rendering, quizzes, progress store)."""

__version__ = "0.1.0"
