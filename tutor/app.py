"""The Textual app (minimal home screen until the TUI issue lands)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class TutorApp(App):
    """attn-tutor's full-screen interface."""

    TITLE = "attn-tutor"
    SUB_TITLE = "attention mechanisms, step by step"
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            "Welcome to attn-tutor.\n\nThe lessons, traces, quizzes, heatmaps and the lab are "
            "reachable from the command line for now: run `attn-tutor --help`.",
            id="home",
        )
        yield Footer()


def make_app() -> TutorApp:
    """The app factory shared by the CLI and the tests."""
    return TutorApp()


def run_app() -> None:
    make_app().run()
