"""Every input's limits in one place, checked before any work and named in the error.

The tutor works examples small enough to follow by hand, draws heatmaps in a terminal and
trains toy models on a laptop, so each input has a size that serves that with room to spare.
Anything bigger is refused in one line that names the limit, before it is parsed, built,
trained or drawn — never a hang, a gigabyte, a ``RecursionError`` or Python's int-digits
message. The trace inputs' own limits (numbers per vector, words per sentence, their size)
live with :class:`engine.trace.InputSpec`, which the engine checks: ``engine.trace.MAX_SIDE``
(64 numbers along any side of a vector or matrix, 64 words in a sentence),
``engine.trace.MAX_WORD`` (40 characters a word) and ``engine.trace.MAX_MAGNITUDE`` (numbers
up to 1e6). This module imports no engine code, so the quiz and ``--help`` stay light.

Error lines echo at most a short prefix of what was typed (:func:`shorten`).
"""

from __future__ import annotations

import re
from pathlib import Path

from tutor.errors import UserError

# ---------------------------------------------------------------------------- the table

MAX_VALUE_CHARS = 100_000
"""One ``--set`` value: a 64 × 64 matrix typed with ten characters a number fits 4 times."""
MAX_INPUT_FILE = 1 << 20
"""``--file inputs.toml``: 1 MB."""
MAX_NESTING = 8
"""Brackets inside brackets (a matrix needs 2, a heatmap JSON object 3), or dotted TOML keys."""
MAX_DIGITS = 50
"""Digits in one number (float64 holds 17 significant digits)."""
MAX_MATRIX_FILE = 8 << 20
"""``heatmap --from`` a .csv, .tsv, .json or .npy: 8 MB."""
MAX_HEATMAP_SIDE = 256
"""Rows or columns of a heatmap from a file (the lab's longest sequences are 200)."""
MAX_LABEL_FILE = 1 << 20
"""``--rows-file`` / ``--cols-file``: 1 MB."""
MAX_LABEL = 40
"""Characters in one heatmap row or column label (as ``engine.trace.MAX_WORD``)."""
MAX_TITLE = 200
"""Characters in a heatmap title."""
MAX_WEIGHTS_FILE = 64 << 20
"""``lab --load FILE.npz``, on disk and decompressed: 64 MB (a model at the largest
``--hidden``/``--embed``/``--attn-dim`` is about 15 MB)."""
MAX_MODEL_SIZE = 256
"""``lab train --hidden/--embed/--attn-dim``, and a loaded model's sizes."""
MAX_LAYERS = 16
"""Encoder or decoder layers of a loaded Transformer."""
MAX_PARAMETERS = {"seq2seq": 3_000_000, "Transformer": 1_000_000}
"""Parameters of a loaded model, counted from its record before any array is read: the work
of scoring it grows with them (a 6-million-parameter Transformer, within every other limit,
took 30 s and 2 GB). The largest seq2seq ``lab train`` makes is about 2.5 million; the
Transformer lab's own model about 137,000."""
MAX_SEQ_LEN = 200
"""Digits in a lab training sequence (``--min-len``/``--max-len``, and a record's lengths)."""
MAX_TEST_DIGITS = 60
"""``lab alignment --digits`` (and ``--length``): the test sequence drawn as a heatmap."""
MAX_STEPS = 100_000
"""Training steps in one ``lab`` run."""
MAX_RECORDED_STEPS = 10**9
"""Steps a weights file may say it was trained for, in all its runs."""
MAX_SEED = 2**32 - 1
"""Seeds: 0 to 4294967295."""
MAX_MINUTES = 600.0
"""A mock exam's ``--time-limit``: ten hours."""
PLAN_MINUTES = (10, 600)
"""``plan --minutes``: the minutes a day to revise, as typed and as stored."""
MAX_QUESTIONS = 500
"""``quiz --count``."""
MAX_ANSWER = 4000
"""Characters in one typed quiz answer (a long free-text answer is a paragraph or two)."""
MAX_LINE_BYTES = 1 << 16
"""A line of quiz input longer than this is read no further (the rest is skipped)."""
MAX_WIDTH = 1000
"""``heatmap --width``."""


# ---------------------------------------------------------------------------- echoes


def shorten(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to a short prefix with its full length: ``'xxxx…' (100000 characters)``.

    (``engine.trace.short`` is the engine's twin: this module must not import the engine.)
    """
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(text) if isinstance(value, str) else text
    return f"{text[:limit] + '…'!r} ({len(text)} characters)"


def size_text(n: int) -> str:
    """``1 MB``, ``64 KB``, ``300 bytes``."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB"
    if n >= 1 << 10:
        return f"{n >> 10} KB"
    return f"{n} bytes"


# ---------------------------------------------------------------------------- checks


def check_file_size(path: Path, limit: int, where: str) -> None:
    """``UserError`` when ``path`` is larger than ``limit`` bytes (checked before reading it)."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # reading it will say what is wrong
    if size > limit:
        raise UserError(f"{where}: the file is {size_text(size)}, larger than the "
                        f"{size_text(limit)} this tutor reads; expected a smaller file")


def read_text(path: Path, where: str, expected: str, limit: int, encoding: str = "utf-8-sig") -> str:
    """The text of ``path`` once its size is within ``limit``; ``UserError`` (too big, not
    UTF-8, unreadable) saying ``expected`` otherwise."""
    check_file_size(path, limit, where)
    try:
        return path.read_text(encoding=encoding)
    except UnicodeDecodeError:
        raise UserError(f"{where}: not UTF-8 text; expected {expected}") from None
    except OSError as exc:
        raise UserError(f"{where}: cannot read it ({exc.strerror or exc})") from None


def check_text(text: str, where: str, *, limit: int = MAX_VALUE_CHARS, toml: bool = False) -> None:
    """Length, nesting and digits of ``text`` before it is parsed; ``UserError`` naming the limit."""
    if len(text) > limit:
        raise UserError(f"{where}: {len(text)} characters, more than the {limit} allowed; "
                        "expected a value small enough to follow by hand")
    check_nesting(text, where, toml=toml)
    check_digits(text, where)


_STRING = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'')
_COMMENT = re.compile(r"#[^\n]*")
_BRACKETS = re.compile(r"[^\[\]{}]+")
_KEY_PART = r'(?:[A-Za-z0-9_\-]+|""|\'\')'
_DOTTED = re.compile(rf"(?m)^[ \t]*\[*[ \t]*{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART}){{{MAX_NESTING},}}")


def nesting_depth(text: str, toml: bool = False) -> int:
    """How deep brackets (``[``, ``{``) nest in JSON or TOML ``text``, strings left out."""
    bare = _STRING.sub('""', text)
    if toml:
        bare = _COMMENT.sub("", bare)
    depth = deepest = 0
    for ch in _BRACKETS.sub("", bare):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def check_nesting(text: str, where: str, toml: bool = False) -> None:
    """``UserError`` when ``text`` nests deeper than :data:`MAX_NESTING`."""
    if text.count("[") + text.count("{") <= MAX_NESTING and not toml:
        return
    depth = nesting_depth(text, toml)
    if depth > MAX_NESTING:
        raise UserError(f"{where}: nested {depth} levels deep; expected at most {MAX_NESTING} "
                        "(a matrix is 2: [[1, 0], [0, 1]])")
    if toml:
        bare = _COMMENT.sub("", _STRING.sub('""', text))
        if _DOTTED.search(bare):
            raise UserError(f"{where}: a key nested more than {MAX_NESTING} levels deep; "
                            "expected top-level NAME = value lines")


_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def check_digits(text: str, where: str) -> None:
    """``UserError`` when a number in ``text`` has more than :data:`MAX_DIGITS` digits."""
    long = _LONG_NUMBER.search(text)
    if long:
        raise UserError(f"{where}: a number with {len(long.group())} digits; expected numbers of "
                        f"at most {MAX_DIGITS} digits")


def check_whole(value: object, where: str, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]`` (a JSON or TOML field); ``UserError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{where}: is {shorten(value) if isinstance(value, str) else _kind(value)}; "
                        f"expected a whole number from {low} to {high}")
    if not low <= value <= high:
        shown = value if abs(value) < 10**12 else ("a number of about "
                                                   f"{int(value.bit_length() * 0.30103) + 1} digits")
        if value > high:
            raise UserError(f"{where}: is {shown}; expected at most {high} (a whole number from "
                            f"{low} to {high})")
        raise UserError(f"{where}: is {shown}; expected a whole number from {low} to {high}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else "not a finite number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def check_seed(seed: int | None, where: str = "--seed") -> int | None:
    """``seed`` when it is None or a whole number from 0 to :data:`MAX_SEED`; ``UserError``
    otherwise (the one range rule of every ``--seed``: quiz, paper, lab)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                             or not 0 <= seed <= MAX_SEED):
        raise UserError(f"{where}: expected a whole number from 0 to {MAX_SEED}")
    return seed
