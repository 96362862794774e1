"""`attn-tutor serve`: binds localhost by default, warns elsewhere, explains a missing extra."""

from __future__ import annotations

import builtins
import sys
import types

from typer.testing import CliRunner

from tutor.cli import app


def _fake_server(monkeypatch, calls):
    module = types.ModuleType("textual_serve.server")

    class Server:
        def __init__(self, command, host="localhost", port=8000, title=None):
            calls.append((command, host, port))

        def serve(self):
            calls.append("served")

    module.Server = Server
    monkeypatch.setitem(sys.modules, "textual_serve", types.ModuleType("textual_serve"))
    monkeypatch.setitem(sys.modules, "textual_serve.server", module)


def test_default_is_localhost_without_warning(monkeypatch):
    calls = []
    _fake_server(monkeypatch, calls)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 0
    assert calls[0][1:] == ("localhost", 8000) and calls[0][0].endswith("-m tutor.tui_main")
    assert "warning" not in result.output


def test_other_host_warns_about_authentication(monkeypatch):
    calls = []
    _fake_server(monkeypatch, calls)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "9000"])
    assert result.exit_code == 0
    assert calls[0][1:] == ("0.0.0.0", 9000)
    assert "no authentication" in result.output


def test_missing_extra_is_one_line_and_exit_2(monkeypatch):
    monkeypatch.delitem(sys.modules, "textual_serve.server", raising=False)
    real_import = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name.startswith("textual_serve"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("attn-tutor: error: `attn-tutor serve` needs textual-serve")
