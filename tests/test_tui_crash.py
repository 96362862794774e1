"""A bug in the full-screen tutor ends it as the README promises: one line on stderr naming
a report file under the data folder's reports/, exit status 70 — for an exception in a
worker thread and in a screen callback alike (Textual used to print a screenful of
traceback and exit 0)."""

from __future__ import annotations

import pytest
from textual import work

import tutor.app as app_mod
from tutor.paths import data_dir


class _Broken(app_mod.TutorApp):
    how = "worker"

    def on_mount(self) -> None:
        super().on_mount()
        if self.how == "worker":
            self.explode()
        else:
            self.call_after_refresh(self.callback)

    @work(thread=True)
    def explode(self) -> None:
        raise RuntimeError("boom in a worker")

    def callback(self) -> None:
        raise KeyError("boom in a screen callback")

    def run(self, *args, **kwargs):  # the real terminal is not ours in a test: headless
        return super().run(headless=True, size=(100, 30))


@pytest.mark.parametrize("how, words", [("worker", "RuntimeError: boom in a worker"),
                                        ("callback", "KeyError: 'boom in a screen callback'")])
def test_an_unexpected_exception_is_one_line_exit_70_and_a_report(monkeypatch, capsys, how, words):
    monkeypatch.setattr(_Broken, "how", how)
    monkeypatch.setattr(app_mod, "make_app", lambda start=None, warm_up=True: _Broken(start, warm_up=False))
    with pytest.raises(SystemExit) as exit_:
        app_mod.run_app()
    assert exit_.value.code == 70
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("attn-tutor: internal error (") and words in lines[0]
    reports = sorted((data_dir() / "reports").glob("crash-*.txt"))
    assert len(reports) == 1 and str(reports[0]) in lines[0]
    assert words.split(":")[0] in reports[0].read_text() and "Traceback" in reports[0].read_text()
