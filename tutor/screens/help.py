"""`?`: the keys of the screen you came from, each listed once.

:func:`key_meanings` collects every key the tutor itself binds on a screen — the screen's
own bindings, those of the tutor's widgets on it (the heatmap's arrows, ``v``, ``s``, ``,``
and ``.``) and the app's — so a test can hold each key to one meaning per screen, and
:func:`help_rows` lists them for the help: keys with the same action on one row
(``↑ ↓ ← →  Move the cell cursor``), each key once.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from textual.actions import parse
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tutor.render.safe import assemble, text


@dataclass(frozen=True)
class KeyUse:
    """One key as the tutor binds it on a screen: which action, the words for it, and where.

    ``row_words``: the owner's ``HELP_WORDS`` for this kind of action, when it gathers several
    keys on one help row (the heatmap's four arrows are one "move the cell cursor").
    """

    key: str
    action: str
    description: str
    owner: str
    row_words: str | None = None
    available: bool = True


def _bindings(owner: object) -> list[Binding]:
    """The bindings the tutor's own classes declare for ``owner`` (not Textual's: focus
    cycling, copy, scrolling), nearest class first."""
    out: list[Binding] = []
    for cls in type(owner).__mro__:
        if cls.__module__.startswith("tutor.") and "BINDINGS" in cls.__dict__:
            out += Binding.make_bindings(cls.__dict__["BINDINGS"])
    return out


def _words(owner: object, kind: str) -> str | None:
    for cls in type(owner).__mro__:
        words = cls.__dict__.get("HELP_WORDS", {})
        if kind in words:
            return words[kind]
    return None


def _available(owner: object, action: str) -> bool:
    """Whether ``owner``'s ``check_action`` lets ``action`` run now (the footer hides it if not)."""
    _, name, params = parse(action)
    check = getattr(owner, "check_action", None)
    return check is None or check(name, params) is True


def key_uses(app: App, screen: Screen) -> list[KeyUse]:
    """Every key the tutor binds on ``screen``: its widgets' first (as Textual asks the focused
    widget first), then the screen's, then the app's (not on a modal screen, which cuts the
    app's keys off)."""
    owners: list[object] = [w for w in screen.query("*") if type(w).__module__.startswith("tutor.")]
    owners += [screen] if screen.is_modal else [screen, app]
    out = []
    for owner in owners:
        for binding in _bindings(owner):
            out.append(KeyUse(binding.key, binding.action, binding.description, type(owner).__name__,
                              _words(owner, binding.action.split("(", 1)[0]),
                              _available(owner, binding.action)))
    return out


def key_meanings(app: App, screen: Screen) -> dict[str, set[str]]:
    """Key → the distinct actions bound to it on ``screen`` (one, for a key that means one thing)."""
    out: dict[str, set[str]] = {}
    for use in key_uses(app, screen):
        out.setdefault(use.key, set()).add(use.action)
    return out


def help_rows(app: App, screen: Screen) -> list[tuple[str, str]]:
    """(keys, what they do) for the help: the first meaning of each key, and keys with the
    same action (or the same ``HELP_WORDS``) on one row; a key whose action cannot run now
    (``h`` on a trace without a heatmap) is left out, as the footer leaves it out."""
    rows: dict[tuple[str, str], list[str]] = {}
    seen: set[str] = set()
    for use in key_uses(app, screen):
        if use.key in seen or not use.description or not use.available:
            continue
        seen.add(use.key)
        words = use.row_words or use.description
        group = (use.owner, use.action.split("(", 1)[0]) if use.row_words else (use.owner, use.action)
        shown = app.get_key_display(Binding(use.key, use.action, use.description))
        rows.setdefault((*group, words), []).append(shown)  # type: ignore[arg-type]
    return [(" ".join(dict.fromkeys(keys)), key[-1]) for key, keys in rows.items()]


class HelpScreen(ModalScreen[None]):
    """A modal listing every key binding active on the previous screen, plus the global ones."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", show=True)]

    def __init__(self, title: str, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self._title = title
        self._rows = rows

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, description in self._rows:
            table.add_row(text(key), text(description))
        with Vertical(id="help-box"):
            yield Static(assemble((self._title, "bold"), " — keys", ("   Esc or ? closes this", "dim")),
                         id="help-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(table, id="help-table")
