"""`attn-tutor heatmap`: files, labels, traces, errors (one line, exit 2), colour and --save."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from engine.trace import Erratum, HeatmapData, Trace
from tutor.cli import app

DATA = Path(__file__).parent / "data"
NOTES_CSV = DATA / "heatmap_notes.csv"
ANSI = re.compile(r"\x1b\[")

# The notes' table drawn by hand (see tests/test_heatmap_render.py for the shading rule).
GRID = """\
        my   feet  hurt
ai     ....  :::: [####]
mal    .... [%%%%] ....
au          [@@@@]
pieds       [@@@@] ...."""


def heatmap(*args: str, **env: str):
    result = CliRunner().invoke(app, ["heatmap", *args], env={"COLUMNS": "80", **env})
    return result


def ok(*args: str) -> str:
    result = heatmap(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def fails(*args: str) -> str:
    """The one stderr line of a refused command (exit 2, nothing on stdout)."""
    result = heatmap(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --------------------------------------------------------------------------- files that work

@pytest.mark.parametrize("name", ["heatmap_notes.csv", "heatmap_notes.tsv", "heatmap_notes.json"])
def test_notes_table_from_each_format(name):
    out = ok("--from", str(DATA / name), "--width", "80")
    assert GRID in out
    assert "attention weights: every row sums to 1" in out


def test_title_defaults_to_the_file_name_or_the_json_title():
    assert ok("--from", str(NOTES_CSV), "-w", "80").splitlines()[0] == "heatmap_notes.csv"
    assert ok("--from", str(DATA / "heatmap_notes.json"), "-w", "80").splitlines()[0] == "Reading a heatmap"
    assert ok("--from", str(NOTES_CSV), "-w", "80", "--title", "mine").splitlines()[0] == "mine"


def test_bare_numbers_with_label_flags(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("0.1,0.2,0.7\n0.1,0.8,0.1\n0.05,0.90,0.05\n0.05,0.85,0.10\n")
    out = ok("--from", str(path), "--rows", "ai mal au pieds", "--cols", "my feet hurt", "-w", "80")
    assert GRID in out


def test_label_files(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1], [0.05, 0.90, 0.05], [0.05, 0.85, 0.10]]))
    (tmp_path / "rows.txt").write_text("ai\nmal\nau\npieds\n\n")
    (tmp_path / "cols.txt").write_text("my\nfeet\nhurt\n")
    out = ok("--from", str(path), "--rows-file", str(tmp_path / "rows.txt"),
             "--cols-file", str(tmp_path / "cols.txt"), "-w", "80")
    assert GRID in out


def test_flags_override_the_files_own_labels():
    out = ok("--from", str(NOTES_CSV), "--rows", "A B C D", "-w", "80")
    assert out.splitlines()[2].startswith("A ")


def test_values_and_row_scale(tmp_path):
    out = ok("--from", str(NOTES_CSV), "--values", "--scale", "row", "-w", "80")
    # per row: ai 0..0.7 → 0.2 is level floor(2.86) = 2 ':'; au 0..0.9 → 0.05 is level 0
    assert "ai     . 0.10  : 0.20 [@ 0.70]" in out
    assert "au       0.05 [@ 0.90]   0.05" in out
    assert "0 to each row's maximum" in out


def test_json_plain_list_and_negative_scores(tmp_path):  # the diverging scale: -3..3
    path = tmp_path / "s.json"
    path.write_text("[[-2, 0.5, 3], [1, -1, 0]]")
    out = ok("--from", str(path), "-w", "80")
    assert "a" not in out.splitlines()[1]  # default labels are numbers
    assert "1  --  ^^ [##]" in out
    assert "not attention weights: rows do not sum to 1" in out


def test_wide_file_is_paged(tmp_path):
    path = tmp_path / "wide.npy"
    np.save(path, np.random.default_rng(0).random((4, 50)))
    out = ok("--from", str(path), "--width", "80")
    assert "columns 1–19 of 50" in out and "columns 39–50 of 50" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_ascii_is_seven_bit(tmp_path):
    path = tmp_path / "wide.npy"
    np.save(path, np.random.default_rng(0).random((4, 50)))
    out = ok("--from", str(path), "--width", "80", "--ascii", "--rows", "j’ ai mal …")
    assert out.isascii()
    assert "columns 1-19 of 50" in out
    assert "j' " in out


def test_ascii_listing_is_seven_bit_too():
    """The listing ignored --ascii and printed α and √d_k from the trace titles."""
    out = ok("--ascii")
    assert out.isascii() and "Why divide by sqrt(d_k)" in out


# --------------------------------------------------------------------------- bad files: one line, exit 2

def test_missing_file():
    assert fails("--from", "nope.csv") == "attn-tutor: error: --from nope.csv: no such file"


def test_unknown_input_extension(tmp_path):
    path = tmp_path / "w.xlsx"
    path.write_text("x")
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: unknown file type '.xlsx'; expected .csv, .tsv, .npy or .json")


def test_ragged_csv():
    path = DATA / "heatmap_ragged.csv"
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: line 4 has 2 values; expected 3 like line 2 "
        "(every row needs the same number of columns)")


def test_csv_cell_that_is_not_a_number(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("0.5,0.5\n0.5,abc\n")
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: line 2, column 2: 'abc' is not a number"


def test_csv_empty_cell(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("0.5,0.5\n0.5,\n")
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: line 2, column 2 is empty; expected a number"


def test_csv_nan(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(",a,b\nx,0.5,0.5\ny,nan,1\n")
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: line 3, column 2 is nan; expected finite numbers"


def test_npy_not_two_d(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, np.zeros((2, 3, 4)))
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: got a 3-D array of shape (2, 3, 4); expected a 2-D matrix (rows, cols)")


def test_npy_nan(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, np.array([[0.5, 0.5], [0.2, np.nan]]))
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: row 2, column 2 is nan; expected finite numbers"


def test_npy_that_is_not_an_array(tmp_path):
    path = tmp_path / "w.npy"
    path.write_text("hello")
    assert fails("--from", str(path)).startswith(f"attn-tutor: error: --from {path}: not a readable .npy array (")


def test_npy_of_strings(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, np.array([["a", "b"]]))
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: holds <U1 values; expected a 2-D array of numbers"


def test_json_one_d(tmp_path):
    path = tmp_path / "w.json"
    path.write_text("[0.2, 0.8]")
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: weights is a 1-D list of 2 numbers; "
        "expected a 2-D list of rows like [[0.1, 0.9], [0.8, 0.2]]")


def test_json_ragged(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"weights": [[0.2, 0.8], [1]]}')
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: row 2 has 1 value; expected 2 like row 1 (every row the same length)")


def test_json_nan_and_bad_syntax_and_missing_key(tmp_path):
    path = tmp_path / "w.json"
    path.write_text("[[0.2, NaN]]")
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: row 1, column 2 is nan; expected finite numbers"
    path.write_text("[[0.2, 0.8]")
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: not valid JSON (Expecting ',' delimiter at line 1, column 12)")
    path.write_text('{"w": [[1]]}')
    assert fails("--from", str(path)) == f"attn-tutor: error: --from {path}: unknown key 'w'; expected weights, rows, cols, title"


def test_wrong_number_of_labels(tmp_path):
    assert fails("--from", str(NOTES_CSV), "--rows", "j' ai mal au pieds") == (
        "attn-tutor: error: --rows: 5 labels for 4 rows; expected 4, one per row")
    (tmp_path / "c.txt").write_text("my\nfeet\n")
    assert fails("--from", str(NOTES_CSV), "--cols-file", str(tmp_path / "c.txt")) == (
        f"attn-tutor: error: --cols-file {tmp_path / 'c.txt'}: 2 labels for 3 columns; expected 3, one per column")


def test_flag_combinations_that_make_no_sense():
    assert fails("--rows", "a b") == "attn-tutor: error: --rows labels a file's matrix; use it with --from FILE"
    assert fails("scores", "--from", str(NOTES_CSV)) == (
        f"attn-tutor: error: give a trace name or --from FILE, not both (got 'scores' and --from {NOTES_CSV})")
    assert fails("--index", "2") == (
        "attn-tutor: error: name a trace to use --set, --file or --index (run `attn-tutor heatmap` to list them)")


# --------------------------------------------------------------------------- --save

def test_save_text_svg_html(tmp_path):
    for suffix in ("txt", "svg", "html"):
        path = tmp_path / f"h.{suffix}"
        result = heatmap("--from", str(NOTES_CSV), "-w", "80", "--save", str(path))
        assert result.exit_code == 0, result.output
        assert result.stderr.strip().startswith(f"wrote {path}")
    text = (tmp_path / "h.txt").read_text()
    assert GRID in text and text == ok("--from", str(NOTES_CSV), "-w", "80")
    svg = (tmp_path / "h.svg").read_text()
    assert svg.lstrip().startswith("<svg") and "pieds" in svg
    assert "#fde725" in svg.lower()  # the top shade's colour is kept in the picture
    html = (tmp_path / "h.html").read_text()
    assert "<html" in html.lower() and "pieds" in html and "<title>heatmap_notes.csv</title>" in html


def test_saved_pictures_load_nothing_from_the_internet(tmp_path):
    """Rich's SVG loaded Fira Code from a CDN (issue 34 §5): offline it drew in a fallback
    font, online it told a server the file was opened. Nothing in a saved picture may
    reference another address; the SVG's one http string is its XML namespace."""
    for suffix in ("svg", "html"):
        path = tmp_path / f"h.{suffix}"
        assert heatmap("--from", str(NOTES_CSV), "--save", str(path)).exit_code == 0
        data = path.read_text()
        addresses = re.findall(r"(?:https?:)?//[^\s\"')<>]+", data)
        assert addresses in ([], ["http://www.w3.org/2000/svg"]), addresses
        for fetch in ("@font-face", "@import", "url(http", "url(//", "src=", "href="):
            assert fetch not in data, fetch
    svg = (tmp_path / "h.svg").read_text()
    assert "font-family: ui-monospace" in svg and "monospace;" in svg


def test_save_unknown_extension(tmp_path):
    path = tmp_path / "h.png"
    assert fails("--from", str(NOTES_CSV), "--save", str(path)) == (
        f"attn-tutor: error: --save {path}: unknown file type '.png'; expected .txt, .svg or .html")
    assert not path.exists()


def test_save_into_a_missing_folder(tmp_path):
    path = tmp_path / "no" / "h.txt"
    result = heatmap("--from", str(NOTES_CSV), "--save", str(path))
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"attn-tutor: error: --save {path}: could not write the file (No such file or directory)")


# --------------------------------------------------------------------------- traces

def _fake_trace() -> Trace:
    w = np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1], [0.05, 0.90, 0.05], [0.05, 0.85, 0.10]])
    return Trace(
        name="fake", title="Fake trace", section=11, inputs={}, steps=[], result={},
        errata=[Erratum(where="§11 worked example", printed="a 3×3 grid",
                        computed="4 rows × 3 columns", why="j' has no row.", kind="wording")],
        heatmaps=[HeatmapData("alignment", w, ["ai", "mal", "au", "pieds"], ["my", "feet", "hurt"]),
                  HeatmapData("scores", np.array([[-1.0, 2.0]]), ["q"], ["k1", "k2"], kind="scores")],
    )


@pytest.fixture
def fake_traces(monkeypatch):
    """A registry of three traces: one with two heatmaps, one without, one that cannot build."""
    import engine.traces as traces
    from engine.traces import TraceInfo

    infos = [TraceInfo("fake", 11, "Fake trace", "two heatmaps"),
             TraceInfo("plain", 1, "No heatmap", "steps only"),
             TraceInfo("broken", 2, "Not written", "missing module")]

    def build(name, overrides=None):
        if name == "broken":
            raise ModuleNotFoundError("No module named 'engine.traces.broken'", name="engine.traces.broken")
        if name == "plain":
            return Trace(name="plain", title="No heatmap", section=1, inputs={}, steps=[], result={})
        return _fake_trace()

    def get_info(name):
        for info in infos:
            if info.name == name:
                return info
        raise ValueError(f"no trace named {name!r}")

    monkeypatch.setattr(traces, "build", build)
    monkeypatch.setattr(traces, "get_info", get_info)
    monkeypatch.setattr(traces, "list_traces", lambda: infos)


def test_listing_skips_traces_that_fail_to_build(fake_traces):
    result = heatmap()
    assert result.exit_code == 0
    assert "fake" in result.stdout and "Fake trace: alignment (4x3), scores (1x2)" in result.stdout
    assert "plain" not in result.stdout and "broken" not in result.stdout
    assert result.stderr.strip() == "(skipped 1 trace that could not be built: broken)"


def test_trace_draws_every_heatmap_then_its_errata(fake_traces):
    out = ok("fake", "-w", "80")
    assert "Fake trace: alignment (1 of 2)" in out and "Fake trace: scores (2 of 2)" in out
    assert GRID in out
    # [-1, 2] sums to 1: what makes it scores, not weights, is the negative value
    assert "not attention weights: rows sum to 1, but some values are negative (weights never are)" in out
    assert "rows do not sum to 1 (every row sums to 1)" not in out
    errata = out.index("Errata")
    assert errata > out.index("Fake trace: scores") and "a 3×3 grid" in out[errata:]


def test_trace_index_picks_one(fake_traces):
    out = ok("fake", "--index", "2", "-w", "80")
    assert "Fake trace: scores (2 of 2)" in out and "alignment" not in out
    assert fails("fake", "--index", "3") == (
        "attn-tutor: error: --index 3: trace fake has 2 heatmaps; expected a number from 1 to 2")


def test_trace_without_heatmaps_or_module(fake_traces):
    assert fails("plain") == (
        "attn-tutor: error: trace 'plain' draws no heatmap; run `attn-tutor heatmap` to list the ones that do")
    assert fails("broken") == (
        "attn-tutor: error: trace 'broken' is not available yet; run `attn-tutor heatmap` to list the "
        "traces that draw heatmaps")
    assert fails("nosuch") == ("attn-tutor: error: no trace 'nosuch'. Run `attn-tutor heatmap` to "
                               "list the ones that draw heatmaps.")
    assert fails("fak") == ("attn-tutor: error: no trace 'fak'. Did you mean 'fake'? Run "
                            "`attn-tutor heatmap` to list the ones that draw heatmaps.")


def test_real_trace_with_set_overrides():
    """`scores` (§6) draws its weights; --set changes them exactly as for `attn-tutor trace`."""
    out = ok("scores", "--values", "-w", "80")
    assert "0.43" in out  # the notes' α₂ = 0.431
    out = ok("scores", "--values", "-w", "80", "--set", "Q=0,0")
    assert "Q [@ 0.33][@ 0.33][@ 0.33]" in out  # a zero query scores every key 0: a three-way tie


def test_real_trace_with_an_inputs_file(tmp_path):
    inputs = tmp_path / "inputs.toml"
    inputs.write_text("Q = [0, 0]\n")
    out = ok("scores", "--values", "-w", "80", "--file", str(inputs))
    assert "Q [@ 0.33][@ 0.33][@ 0.33]" in out
    assert fails("scores", "--set", "Q=1,2,3").startswith("attn-tutor: error: input ")


def test_heatmap_reading_trace_shows_the_notes_table_and_erratum():
    from engine.traces import REGISTRY

    try:
        import importlib

        importlib.import_module(REGISTRY["heatmap-reading"].module)
    except ModuleNotFoundError:
        pytest.skip("the heatmap-reading trace has not landed yet")
    out = ok("heatmap-reading", "-w", "80")
    for line in GRID.splitlines()[1:]:  # the notes' four rows, drawn as by hand above
        assert line in out.splitlines()
    errata = out.index("Errata")
    assert errata > out.index("[  ] = the largest value in its row")  # under the heatmap


# --------------------------------------------------------------------------- colour on a real terminal

def _on_a_pty(extra_env: dict[str, str]) -> str:
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "80", **extra_env})
    proc = subprocess.Popen([sys.executable, "-m", "tutor", "heatmap", "--from", str(NOTES_CSV), "-w", "80"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_colour_on_a_terminal_and_none_with_no_color():
    coloured = _on_a_pty({})
    assert ANSI.search(coloured)
    plain = _on_a_pty({"NO_COLOR": "1"})
    assert not ANSI.search(plain)
    assert "[@@@@]" in plain and "pieds" in plain
    dumb = _on_a_pty({"TERM": "dumb"})
    assert not ANSI.search(dumb)


def test_piped_output_has_no_escapes():
    out = subprocess.run([sys.executable, "-m", "tutor", "heatmap", "--from", str(NOTES_CSV), "-w", "80"],
                         capture_output=True, text=True, env={**os.environ, "TERM": "xterm-256color"})
    assert out.returncode == 0 and not ANSI.search(out.stdout)
    assert GRID in out.stdout


def test_json_object_documented_shape_round_trips(tmp_path):
    path = tmp_path / "o.json"
    path.write_text(json.dumps({"weights": [[1, 0], [0, 1]], "rows": ["a", "b"], "cols": ["x", "y"]}))
    out = ok("--from", str(path), "-w", "80")
    assert "a [@@]" in out and "b     [@@]" in out  # label, space, blank cell, bracketed cell


# --------------------------------------------------------------------------- found in QA

def test_unicode_minus_in_a_csv_is_a_number_not_a_row_label(tmp_path):
    """"−0.1" copied from a PDF used to turn the first column into labels, silently."""
    path = tmp_path / "w.csv"
    path.write_text("\u22120.1,0.2\n0.3,\u22120.4\n", encoding="utf-8")
    out = ok("--from", str(path), "--values", "--ascii")
    assert "-0.10" in out and "-0.40" in out
    assert "columns = 2 input" in out


def test_a_folder_is_called_a_folder(tmp_path):
    folder = tmp_path / "w.csv"
    folder.mkdir()
    assert fails("--from", str(folder)) == f"attn-tutor: error: --from {folder}: is a folder; expected a .csv file"
    labels = tmp_path / "labels"
    labels.mkdir()
    assert fails("--from", str(NOTES_CSV), "--rows-file", str(labels)) == (
        f"attn-tutor: error: --rows-file {labels}: is a folder; expected a text file with one label per line")


def test_huge_numbers_in_a_file_are_refused(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("1e300,1\n1,1\n")
    assert fails("--from", str(path)) == (
        f"attn-tutor: error: --from {path}: row 1, column 1 is 1.000e+300; expected numbers between "
        "-1000000 and 1000000 (attention weights, or scores)")


@pytest.mark.parametrize("suffix", [".html", ".svg"])
def test_saved_errata_are_wrapped_once_to_the_width(tmp_path, suffix):
    """--save x.svg/.html re-wrapped the already wrapped errata lines: every other line was a
    stray word. Each saved line must be one of the lines printed, none longer than the width."""
    import html as html_mod
    import re

    from engine.traces import build
    from tutor.render.plain import errata_lines

    out = tmp_path / f"h{suffix}"
    ok("heatmap-reading", "-w", "70", "--save", str(out))
    data = out.read_text(encoding="utf-8")
    if suffix == ".html":
        text = html_mod.unescape(re.sub(r"<[^>]+>", "", data.split("<pre", 1)[1].split(">", 1)[1]))
        lines = [line.rstrip() for line in text.splitlines()]
    else:  # one <text> per painted run; runs on the same y are one line
        rows: dict[str, list[str]] = {}
        for y, chunk in re.findall(r'<text[^>]* y="([\d.]+)"[^>]*>([^<]*)</text>', data):
            rows.setdefault(y, []).append(html_mod.unescape(chunk).replace("\xa0", " "))
        lines = ["".join(parts).rstrip() for _, parts in sorted(rows.items(), key=lambda kv: float(kv[0]))]
    expected = errata_lines(build("heatmap-reading"), ascii_only=False, width=70)
    start = next(i for i, line in enumerate(lines) if line.startswith("Errata:"))
    assert lines[start:start + len(expected)] == expected
    assert max(len(line) for line in expected) <= 70


def test_semicolon_separated_csv_loads_like_commas(tmp_path):
    # spreadsheets in many languages write ';' between cells; it used to load as an empty
    # (1, 0) matrix
    semi, comma = tmp_path / "semi.csv", tmp_path / "comma.csv"
    semi.write_text(";my;feet;hurt\nj';0.7;0.2;0.1\nai;0.1;0.8;0.1\n")
    comma.write_text(",my,feet,hurt\nj',0.7,0.2,0.1\nai,0.1,0.8,0.1\n")
    drawn = [ok("--from", str(p), "--values", "--ascii", "--title", "t") for p in (semi, comma)]
    assert drawn[0] == drawn[1] and "0.70" in drawn[0]  # the same table, read the same way


def test_decimal_commas_between_semicolons_say_what_to_type(tmp_path):
    path = tmp_path / "de.csv"
    path.write_text("0,7;0,3\n0,4;0,6\n")
    line = fails("--from", str(path))
    assert "mixes ';' and ','" in line and "'.' as the decimal point" in line


def test_a_semicolon_inside_a_label_of_a_comma_file_is_a_character(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(",my;own,feet\nj',0.5,0.5\nai,0.2,0.8\n")
    assert "my;own" in ok("--from", str(path), "--ascii")


def test_an_empty_first_cell_row_is_a_gap_not_a_header(tmp_path):
    path = tmp_path / "gap.csv"
    path.write_text("1,,2\n3,4,5\n")
    assert fails("--from", str(path)).endswith("line 1, column 2 is empty; expected a number")


@pytest.mark.parametrize("text", ["x,y\nc\nd\n", "c\nd\n"])
def test_rows_of_labels_alone_name_the_missing_numbers(tmp_path, text):
    """A file of row labels and no numbers says so, not 'expected 0' names or a (1, 0) shape."""
    path = tmp_path / "labels.csv"
    path.write_text(text)
    message = fails("--from", str(path))
    assert "has a label and no numbers; expected numbers after it" in message
    assert "expected 0" not in message and "(1, 0)" not in message
