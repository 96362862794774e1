"""Run the TUI unconditionally (used by `attn-tutor serve`, whose app has no real TTY)."""

from tutor.app import run_app

if __name__ == "__main__":
    run_app()
