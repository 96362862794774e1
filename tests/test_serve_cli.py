"""`attn-tutor serve`: binds localhost by default, warns elsewhere, explains a missing extra."""

from __future__ import annotations

import builtins
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tutor.cli import app
from tutor.commands.serve import INSTALL_HINT

pytest.importorskip("textual_serve")


def _no_serving(monkeypatch, calls):
    from tutor.serve import LockedServer

    def serve(self, debug=False):
        calls.append((self.command, self.host, self.port, self.url))

    monkeypatch.setattr(LockedServer, "serve", serve)


def test_default_is_localhost_without_warning(monkeypatch):
    calls = []
    _no_serving(monkeypatch, calls)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 0
    command, host, port, url = calls[0]
    assert (host, port) == ("localhost", 8000) and command.endswith("-m tutor.tui_main")
    assert re.fullmatch(r"http://localhost:8000/\?key=[A-Za-z0-9_-]{20,}", url)
    assert "warning" not in result.output


def test_each_run_has_its_own_key(monkeypatch):
    calls = []
    _no_serving(monkeypatch, calls)
    CliRunner().invoke(app, ["serve"])
    CliRunner().invoke(app, ["serve"])
    assert calls[0][3] != calls[1][3]


def test_other_host_warns_that_the_key_is_the_only_lock(monkeypatch):
    calls = []
    _no_serving(monkeypatch, calls)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "9000"])
    assert result.exit_code == 0
    assert calls[0][1:3] == ("0.0.0.0", 9000)
    assert "anyone who can reach this address and has its key" in result.output


def test_missing_extra_is_one_line_and_exit_2(monkeypatch):
    monkeypatch.delitem(sys.modules, "textual_serve.server", raising=False)
    monkeypatch.delitem(sys.modules, "textual_serve", raising=False)
    real_import = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name.startswith("textual_serve"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        f"attn-tutor: error: `attn-tutor serve` needs textual-serve; install it with: {INSTALL_HINT}")


def test_the_install_hint_is_the_same_in_help_error_and_readme():
    from tutor.commands import serve

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert INSTALL_HINT in serve.HELP and f"`{INSTALL_HINT}`" in readme
    assert "[serve]" not in readme  # no second way of saying it
