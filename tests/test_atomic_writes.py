"""Every file the tutor writes is written whole or not at all (issue 34 §4), tested with a real
fault: the kernel's file-size limit (``RLIMIT_FSIZE``), under which a write past the limit
fails with EFBIG as on a full disk or quota.

Before :mod:`tutor.atomic`, ``export`` and ``sheet -o`` opened the target for writing and
filled it: on a full disk the student's existing file was gone and half a new one was left.
Each writer here runs in a child process under the limit, over an existing file; afterwards
the old file must be byte for byte as it was, no temporary file may be left beside it, and
the command must end in one line. The last test scans ``tutor/`` for a write that does not go
through :mod:`tutor.atomic`, so a new writer cannot bypass it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import store_helpers as h
from tutor import atomic

REPO = Path(__file__).resolve().parents[1]
LIMIT = 1024
"""Bytes any one file may reach in the child: every output below is larger."""
OLD = b"the student's earlier file\n"

CLI = "import sys\nfrom tutor.cli import main\nmain(sys.argv[1:])\n"

WRITERS = {  # name: (arguments, file name); the file's path is appended or put in for {}
    "export csv": (["export", "csv", "{}"], "items.csv"),
    "export markdown": (["export", "markdown", "{}"], "items.md"),
    "export anki": (["export", "anki", "{}"], "items.apkg"),
    "sheet -o .txt": (["sheet", "-o", "{}"], "sheet.txt"),
    "sheet -o .md": (["sheet", "-o", "{}"], "sheet.md"),
    "sheet -o .html": (["sheet", "-o", "{}"], "sheet.html"),
    "trace -o": (["trace", "qkv", "-o", "{}"], "qkv.md"),
    "trace -o .json": (["trace", "qkv", "-o", "{}"], "qkv.json"),
    "heatmap --save .txt": (["heatmap", "qkv", "--save", "{}"], "h.txt"),
    "heatmap --save .svg": (["heatmap", "qkv", "--save", "{}"], "h.svg"),
    "heatmap --save .html": (["heatmap", "qkv", "--save", "{}"], "h.html"),
}


def _run_full(args: list[str], home: Path) -> h.subprocess.CompletedProcess:
    return h.python(CLI, *args, env={"ATTN_TUTOR_HOME": str(home)}, file_size_limit=LIMIT)


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_full_disk_leaves_the_old_file_whole(tmp_path, name):
    args, file_name = WRITERS[name]
    target = tmp_path / "out" / file_name
    target.parent.mkdir()
    target.write_bytes(OLD)
    r = _run_full([a.replace("{}", str(target)) for a in args], tmp_path / "home")
    assert r.returncode == 2, (r.stdout, r.stderr)
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("attn-tutor: error:") and str(target) in line, line
    assert "File too large" in line or "disk" in line, line
    assert target.read_bytes() == OLD  # before the fix: cut to LIMIT bytes of the new file
    assert h.files(target.parent) == {file_name}  # no temporary file left beside it


@pytest.mark.parametrize("name", list(WRITERS))
def test_without_the_limit_the_file_is_replaced(tmp_path, name):
    args, file_name = WRITERS[name]
    target = tmp_path / file_name
    target.write_bytes(OLD)
    target.chmod(0o640)
    r = h.python(CLI, *[a.replace("{}", str(target)) for a in args],
                 env={"ATTN_TUTOR_HOME": str(tmp_path / "home")})
    assert r.returncode == 0, r.stderr
    assert target.stat().st_size > LIMIT and target.read_bytes() != OLD
    assert target.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its permissions
    assert h.files(tmp_path) - {"home"} == {file_name}


LAB_WRITERS = """
import sys
from pathlib import Path
import numpy as np
from tutor.errors import UserError
kind, target = sys.argv[1], Path(sys.argv[2])
try:
    if kind == "weights":
        from engine.seq2seq import Seq2Seq, Seq2SeqConfig
        from tutor.lab.files import save_model
        save_model(target, Seq2Seq.init(Seq2SeqConfig(vocab_size=13, embed_dim=8, hidden_dim=8,
                                                      attn_dim=8)), {"task": "copy"})
    else:
        from tutor.lab.files import save_heatmap
        w = np.full((20, 20), 0.05)
        save_heatmap(target, "t", w, [str(i) for i in range(20)], [str(i) for i in range(20)],
                     lambda: [])
except UserError as exc:
    print(exc, file=sys.stderr)
    sys.exit(2)
"""


@pytest.mark.parametrize(("kind", "file_name"), [("weights", "m.npz"), ("heatmap", "a.json")])
def test_the_lab_s_files_survive_a_full_disk(tmp_path, kind, file_name):
    target = tmp_path / file_name
    target.write_bytes(OLD)
    r = h.python(LAB_WRITERS, kind, str(target), file_size_limit=LIMIT)
    assert r.returncode == 2 and "File too large" in r.stderr, r.stderr
    assert target.read_bytes() == OLD and h.files(tmp_path) == {file_name}
    r = h.python(LAB_WRITERS, kind, str(target))
    assert r.returncode == 0, r.stderr
    assert target.stat().st_size > LIMIT and h.files(tmp_path) == {file_name}


def test_a_crash_report_that_does_not_fit_leaves_no_half_file(tmp_path):
    (tmp_path / "tmp").mkdir()
    code = ("from tutor.errors import report_internal_error\n"
            "print(report_internal_error(RuntimeError('x' * 5000)))\n")
    r = h.python(code, env={"ATTN_TUTOR_HOME": str(tmp_path), "TMPDIR": str(tmp_path / "tmp")},
                 file_size_limit=LIMIT)
    assert "could not write the report" in r.stdout, r.stdout
    assert list((tmp_path / "reports").iterdir()) == []
    assert list((tmp_path / "tmp" / "attn-tutor-reports").iterdir()) == []


def test_a_symbolic_link_is_written_through(tmp_path):
    real = tmp_path / "real.txt"
    real.write_bytes(OLD)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic.write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_folder_is_not_replaced(tmp_path):
    (tmp_path / "x.txt").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic.write_text(tmp_path / "x.txt", "new")
    assert (tmp_path / "x.txt").is_dir() and h.files(tmp_path) == {"x.txt"}


def test_an_error_inside_the_block_removes_the_temporary_file(tmp_path):
    target = tmp_path / "t.bin"
    target.write_bytes(OLD)
    with pytest.raises(ValueError), atomic.replacing(target) as tmp:
        tmp.write_bytes(b"half")
        raise ValueError("the library failed")
    assert target.read_bytes() == OLD and h.files(tmp_path) == {"t.bin"}


# ------------------------------------------------------------------ no writer bypasses it

WRITING_METHODS = {"write_text", "write_bytes", "write_to_file", "savez", "savez_compressed",
                   "save", "touch", "copyfile", "copy", "copy2", "export_svg_file"}
"""Calls that write a file named by their receiver or first argument."""
ALLOWED = {
    ("tutor/atomic.py", "open"), ("tutor/atomic.py", "write_bytes"),  # the helper itself
    ("tutor/store/opening.py", "copyfile"),  # copies into a private temporary folder
}


def _writes(path: Path) -> list[tuple[int, str]]:
    """(line, what) of each call in ``path`` that writes a file other than through
    :func:`tutor.atomic.replacing` (an ``open`` for writing, or a writing method, whose
    target is not the name a ``with atomic.replacing(...) as NAME`` bound)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    temporary: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:  # `with atomic.replacing(p) as tmp, open(tmp, "wb") as fh`
                call = item.context_expr
                if not (isinstance(call, ast.Call) and isinstance(item.optional_vars, ast.Name)):
                    continue
                through = ast.unparse(call.func).endswith("replacing") or (
                    ast.unparse(call.func) == "open" and call.args
                    and isinstance(call.args[0], ast.Name) and call.args[0].id in temporary)
                if through:
                    temporary.add(item.optional_vars.id)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or ast.unparse(node.func).startswith("atomic."):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if not (isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+")):
                continue
            target = node.args[0] if node.args else None
        elif name in WRITING_METHODS:
            if name in ("save", "copy", "touch") and not _looks_like_a_file_write(node):
                continue
            target = node.args[0] if name in ("savez", "savez_compressed", "copyfile") and node.args \
                else node.func.value if isinstance(node.func, ast.Attribute) else None
            if name == "write_to_file" and node.args:
                target = node.args[0]
        else:
            continue
        names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target is not None else set()
        if name in ("savez", "savez_compressed") and node.args and isinstance(node.args[0], ast.Name):
            names = {node.args[0].id}
        if names & temporary:
            continue
        found.append((node.lineno, ast.unparse(node)[:80]))
    return found


def _looks_like_a_file_write(node: ast.Call) -> bool:
    """``np.save(path, …)`` / ``shutil.copy(a, b)`` / ``Path.touch()``, not ``dict.copy()``."""
    func = ast.unparse(node.func)
    return func in ("np.save", "numpy.save", "shutil.copy", "shutil.copy2") or func.endswith(".touch")


def test_every_file_the_tutor_writes_goes_through_tutor_atomic():
    offenders = []
    for path in sorted((REPO / "tutor").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        for line, what in _writes(path):
            if (rel, what.split("(")[0].rsplit(".", 1)[-1]) not in ALLOWED:
                offenders.append(f"{rel}:{line}: {what}")
    assert offenders == [], "write these through tutor.atomic:\n" + "\n".join(offenders)


def test_the_scan_finds_an_in_place_write(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("from pathlib import Path\n"
                      "def save(p, text):\n    Path(p).write_text(text)\n"
                      "def dump(p, d):\n    with open(p, 'w') as fh:\n        fh.write(d)\n"
                      "def ok(p, d):\n    with atomic.replacing(p) as tmp, open(tmp, 'wb') as fh:\n"
                      "        fh.write(d)\n")
    assert [line for line, _ in _writes(sample)] == [3, 5]

