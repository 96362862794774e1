"""A file or folder name reaches the terminal through one cleaning point,
:func:`tutor.render.safe.shown_path` (issue 34 §4): "Wrote …" of ``export`` and ``sheet -o``
echoed a name holding an escape sequence raw, and so did the store's warnings about the data
folder. The behavioural tests feed such names to each command; the scan holds every message
in ``tutor/`` that formats a path to ``shown_path``, so a new one cannot forget.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import store_helpers as h
from tests.fuzz_helpers import invoke
from tutor.render.safe import shown_path

REPO = Path(__file__).resolve().parents[1]
NASTY = "a\x1b]52;c;aGVsbG8=\x07b\x1b[2J\u202ec\x9b31m"
"""An OSC 52 clipboard write, a screen clear, a bidi override and an 8-bit CSI."""
CONTROL = ("\x1b", "\x07", "\x9b", "\u202e")


def _clean(text: str) -> None:
    for c in CONTROL:
        assert c not in text, repr(text)


def test_shown_path_marks_each_control_character():
    assert shown_path(Path(f"/tmp/{NASTY}.csv")) == "/tmp/a?]52;c;aGVsbG8=?b?[2J?c?31m.csv"
    assert shown_path("/tmp/two\nlines.md") == "/tmp/two?lines.md"
    assert shown_path(os.fsdecode(b"/tmp/\xff.md")) == "/tmp/?.md"  # not UTF-8: no crash
    assert shown_path("/home/élève/notes d'examen.md") == "/home/élève/notes d'examen.md"


@pytest.mark.parametrize(("args", "name", "said"), [
    (["export", "csv", "{}"], f"{NASTY}.csv", "Wrote"),
    (["export", "markdown", "{}"], f"{NASTY}.md", "Wrote"),
    (["sheet", "-o", "{}"], f"{NASTY}.txt", "Wrote the formula sheet"),
    (["trace", "qkv", "-o", "{}"], f"{NASTY}.md", "wrote"),
    (["heatmap", "qkv", "--save", "{}"], f"{NASTY}.svg", "wrote"),
    (["export", "csv", "{}"], f"no-such-{NASTY}/x.csv", "does not exist"),
    (["heatmap", "--from", "{}"], f"{NASTY}.csv", "--from"),
    (["trace", "qkv", "--file", "{}"], f"{NASTY}.toml", "--file"),
])
def test_file_names_are_echoed_clean(tmp_path, args, name, said):
    target = tmp_path / name
    run = invoke([a.replace("{}", str(target)) for a in args])
    shown = run.out + run.err
    _clean(shown)
    assert said in shown and shown_path(target) in shown, shown


def test_the_data_folder_in_store_warnings_is_clean(tmp_path):
    home = tmp_path / NASTY
    home.mkdir()
    (home / "progress.sqlite3").mkdir()  # a folder where the file should be: a warning
    run = invoke(["plan", "--exam", "2099-01-01", "--today", "2098-12-01"],
                 env={"ATTN_TUTOR_HOME": str(home)})
    _clean(run.err)
    assert f"{shown_path(home / 'progress.sqlite3')} is a folder" in run.err


def test_the_data_folder_of_a_read_only_home_is_clean(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("drops root's capabilities: needs root")
    home = tmp_path / NASTY
    home.mkdir()
    home.chmod(0o555)
    code = ("from tutor.cli import main\n"
            "main(['plan', '--exam', '2099-01-01', '--today', '2098-12-01'])\n")
    r = h.python(code, env={"ATTN_TUTOR_HOME": str(home)}, obey_permissions=True)
    _clean(r.stderr)
    assert f"the progress folder {shown_path(home)} is read-only" in r.stderr


# ------------------------------------------------------------------ every message, by scan

PATH_NAMES = {"path", "paths", "file", "output", "save", "folder", "target", "aside", "load",
              "copy_from", "rows_file", "cols_file", "home", "tmp", "wal", "dest", "source"}
"""Names the tutor gives a path; also anything ending in ``_path``, ``_file`` or ``_dir``."""
PATH_CALLS = {"Path", "data_dir", "default_path"}
PACKAGE_DATA = {
    # errors in the package's own lesson files (a broken install), named by the installed
    # package's paths, not by anything a student typed; they go out through errors.fail,
    # which cleans the whole line
    "tutor/exam/model.py", "tutor/exam/sheet.py", "tutor/quiz/bank.py",
}
NOT_PATHS = {  # a name of PATH_NAMES that is not a path here
    ("tutor/exam/marking.py", "source"),  # "your earlier answer"
    ("tutor/quiz/generators/revision.py", "source"),  # a token of the sentence
    ("tutor/quiz/generators/revision.py", "target"),
    ("tutor/exam/numbers/reading.py", "target"),
    ("tutor/screens/trace.py", "source"),  # where a trace's numbers come from, in words
}


def _root(expr: ast.expr) -> ast.expr:
    """``path`` of ``path.name``, ``path.parent / x``, ``save.suffix``…"""
    while True:
        if isinstance(expr, ast.Attribute):
            expr = expr.value
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            expr = expr.left
        else:
            return expr


def _is_path(expr: ast.expr) -> str | None:
    root = _root(expr)
    if isinstance(root, ast.Name):
        name = root.id
        return name if name in PATH_NAMES or name.endswith(("_path", "_file", "_dir")) else None
    if isinstance(root, ast.Call) and ast.unparse(root.func) in PATH_CALLS:
        return ast.unparse(root.func)
    return None


def unshown_paths(path: Path, rel: str) -> list[str]:
    """Messages (f-strings with words in them) of ``path`` that format a path without
    :func:`shown_path`. File names built from paths (``f"{path}-wal"``) have no words."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.JoinedStr):
            continue
        if not any(isinstance(v, ast.Constant) and " " in v.value for v in node.values):
            continue
        for value in node.values:
            if not isinstance(value, ast.FormattedValue):
                continue
            expr = value.value
            if isinstance(expr, ast.Call) and ast.unparse(expr.func).endswith("shown_path"):
                continue
            name = _is_path(expr)
            if name is not None and (rel, name) not in NOT_PATHS:
                found.append(f"{rel}:{node.lineno}: {{{ast.unparse(expr)}}}")
    return found


def test_every_message_that_names_a_path_goes_through_shown_path():
    offenders = []
    for path in sorted((REPO / "tutor").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel not in PACKAGE_DATA:
            offenders += unshown_paths(path, rel)
    assert offenders == [], "wrap these in tutor.render.safe.shown_path:\n" + "\n".join(offenders)


def test_the_scan_finds_a_raw_path(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text('def f(path, out_file, x):\n'
                      '    print(f"Wrote {path}")\n'
                      '    raise E(f"cannot read {out_file.name}: {x}")\n'
                      '    side = f"{path}-wal"\n'
                      '    print(f"Wrote {shown_path(path)}")\n')
    assert unshown_paths(sample, "m.py") == ["m.py:2: {path}", "m.py:3: {out_file.name}"]
