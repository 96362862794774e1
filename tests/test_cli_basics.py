"""The command skeleton: help is fast and light, stubs exit 2, README and CI agree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tutor.cli import app

ROOT = Path(__file__).resolve().parents[1]
SUBCOMMANDS = ["lesson", "trace", "quiz", "heatmap", "lab", "stats", "serve"]


def test_help_lists_every_subcommand():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in SUBCOMMANDS:
        assert re.search(rf"\b{name}\b", result.output), name


def test_help_imports_neither_numba_nor_textual():
    code = (
        "import sys\n"
        "from tutor.cli import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('numba' in sys.modules, 'textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False False"


def test_bare_command_off_a_terminal_prints_help():
    result = CliRunner().invoke(app, [])
    assert result.exit_code == 0
    assert "Usage" in result.output


def test_bare_command_on_a_terminal_opens_the_tui_without_the_parser():
    code = (
        "import sys\n"
        "sys.argv = ['attn-tutor']\n"
        "import tutor.terminal, tutor.app\n"
        "tutor.terminal.is_interactive = lambda: True\n"
        "tutor.app.run_app = lambda *a, **k: print('the TUI runs')\n"
        "from tutor.launch import main\n"
        "main()\n"
        "print('typer' in sys.modules, 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines() == ["the TUI runs", "False False"]


def test_the_entry_point_hands_everything_else_to_the_command_line():
    out = subprocess.run([sys.executable, "-m", "tutor", "trace"], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0 and "qkv" in out.stdout
    bare = subprocess.run([sys.executable, "-m", "tutor"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert bare.returncode == 0 and "Usage" in bare.stdout     # off a terminal: the help


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_cmd = next(b for b in blocks if "pytest" in b).strip()
    assert test_cmd in ci.splitlines()


@pytest.mark.parametrize(("args", "message"), [
    (["--bogus"], "attn-tutor: error: No such option: --bogus (see `attn-tutor --help`)"),
    (["lesson", "1", "2"], "attn-tutor: error: Got unexpected extra argument(s) (2) (see `attn-tutor lesson --help`)"),
    (["trace", "qkv", "--set"], "attn-tutor: error: Option '--set' requires an argument."),
    # the parser's type checks, in the tutor's words and with the value as typed
    (["trace", "qkv", "--step", "two"],
     "attn-tutor: error: --step two: expected a whole number (see `attn-tutor trace --help`)"),
    (["quiz", "-n", "1.5"], "attn-tutor: error: -n 1.5: expected a whole number (see `attn-tutor quiz --help`)"),
    (["quiz", "--count=abc"],
     "attn-tutor: error: --count abc: expected a whole number (see `attn-tutor quiz --help`)"),
    (["lab", "transformer", "--steps", "abc"],  # a bounded option: click says "int range"
     "attn-tutor: error: --steps abc: expected a whole number (see `attn-tutor lab transformer --help`)"),
    (["lab", "transformer", "--steps", "100001"],
     "attn-tutor: error: --steps 100001: expected at most 100000 (see `attn-tutor lab transformer --help`)"),
    (["lab", "transformer", "--task", "shuffle"], "attn-tutor: error: --task shuffle: expected one of "
     "'reverse', 'copy', 'sort' (see `attn-tutor lab transformer --help`)"),
    (["heatmap", "qkv", "--scale", "col"], "attn-tutor: error: --scale col: expected one of 'matrix', "
     "'row' (see `attn-tutor heatmap --help`)"),
    (["lab", "transformer", "--dropout", "half"],
     "attn-tutor: error: --dropout half: expected a number (see `attn-tutor lab transformer --help`)"),
])
def test_usage_mistakes_are_one_line_and_exit_2(args, message):
    out = subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [message]
    assert out.stdout == ""


def test_piped_help_is_plain_text():
    out = subprocess.run([sys.executable, "-m", "tutor", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("Usage: attn-tutor")
    assert "╭" not in out.stdout and "\x1b[" not in out.stdout


@pytest.mark.parametrize("command", [["trace"], ["stats"], ["lab"], ["lab", "train"],
                                     ["lab", "scaling"], ["lab", "saturation"], ["plan"]])
def test_help_points_at_a_schema_the_installed_tutor_can_print(command):
    # --help used to point at docs/*-json.md, which the wheel does not ship
    help_text = CliRunner().invoke(app, [*command, "--help"]).output
    assert "docs/" not in help_text
    name = command[0]
    words = " ".join(help_text.split())
    assert ("--schema" in words) if command == ["lab"] else (f"attn-tutor {name} --schema" in words)
    schema = CliRunner().invoke(app, [name, "--schema"])
    assert schema.exit_code == 0 and schema.output.startswith(f"# `attn-tutor {name}")


def test_the_schemas_ship_with_the_package():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "schemas/*.md" in project["tool"]["setuptools"]["package-data"]["tutor"]
    from tutor.render.documents import JSON_SCHEMAS

    for name in JSON_SCHEMAS:
        assert (ROOT / "tutor" / "schemas" / f"{name}-json.md").is_file()


def test_no_help_points_into_docs():
    import typer.main

    commands = [[name] for name in typer.main.get_command(app).commands]
    assert len(commands) >= 10
    for command in commands:
        out = CliRunner().invoke(app, [*command, "--help"]).output
        assert "docs/" not in out, command


def test_readme_tour_names_every_area_and_its_key():
    """The Tour's list of areas is the home screen's, so a new area (7 Exam) is not left out."""
    from tutor.screens.home import AREAS

    tour = (ROOT / "README.md").read_text().split("## Tour", 1)[1].split("```", 1)[0]
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert f"has {words[len(AREAS)]} areas" in tour
    for area in AREAS:
        assert f"`{area.key}` {area.title}" in tour, area.title


def test_every_option_the_readme_names_exists():
    """Each `--option` in a README command (Tour lines and inline `attn-tutor …`/`lab …` spans)
    is one its command takes: the Speed section once named a `lab scaling --dtype` that never was."""
    import typer.main

    root = typer.main.get_command(app)
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^attn-tutor ([^#\n]*)", readme, re.M)
    commands += re.findall(r"`(?:attn-tutor )?((?:lab|trace|quiz|heatmap|paper|plan|stats|export|lesson) [^`]*)`",
                           readme)
    assert any("lab scaling" in c for c in commands)
    for line in commands:
        command, words = root, line.split()
        while words and words[0] in getattr(command, "commands", {}):
            command = command.commands[words.pop(0)]
        known = {opt for param in command.params for opt in param.opts + param.secondary_opts}
        for word in words:
            if word.startswith("--"):
                assert word.split("=")[0] in known, f"README: {line!r} names {word}, not an option"


def test_readme_piped_quiz_example_answers_its_own_questions():
    """The README's `printf … | attn-tutor quiz --plain …` line is a working example: its seed
    picks questions its answers fit (b: variances of independent terms add; 1/√3 = 0.577)."""
    readme = (ROOT / "README.md").read_text()
    line = re.search(r"^printf '([^']*)' \| attn-tutor (quiz --plain[^#\n]*)", readme, re.M)
    assert line, "the README's piped quiz example is missing"
    answers = line.group(1).encode().decode("unicode_escape")
    result = CliRunner().invoke(app, line.group(2).split(), input=answers)
    assert result.exit_code == 0, result.output
    n = answers.count("\n")
    assert f"correct {n} of {n} marked" in result.output, result.output
