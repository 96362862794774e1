"""The instructor's screen (Textual), with the class server on the app's own event loop.

Top: the join command and the session key in large digits (for a projector). Left: the
questions to push — ``[bank]`` items are the same for everyone; ``[gen]`` problems,
``[paper]`` parts and ``[trace]`` steps give each student their own numbers (``/`` filters,
Enter or Esc goes back to the list). Right: the board — status line and the two-vote
histogram (:mod:`tutor.classroom.board`), redrawn at most every 0.1 s while answers arrive.
Keys: ``p`` push, ``c`` close voting, ``d`` discuss, ``r`` reopen (second vote), ``v``
reveal, ``n`` next, ``/`` filter, ``q`` end the class (pressed twice). A key that does
nothing in the current state is hidden.
"""

from __future__ import annotations

import time

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Digits, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from tutor.classroom import board
from tutor.classroom.questions import Source, quick_sources, trace_sources
from tutor.classroom.server import ClassServer
from tutor.render import safe

REFRESH = 0.1
"""Seconds between redraws of the board while answers arrive."""


class HostApp(App[str]):
    """The instructor's class screen; see the module docstring."""

    TITLE = "attn-tutor class"
    CSS = """
    #join { height: auto; padding: 0 1; background: $boost; }
    #join-line { height: auto; }
    #key { width: auto; height: 3; }
    #picker { width: 38%; min-width: 26; }
    #filter { height: 3; }
    #sources { text-wrap: nowrap; text-overflow: ellipsis; }
    #board { padding: 0 1; }
    #status { height: auto; }
    #histogram { height: auto; }
    """
    BINDINGS = [
        Binding("p", "push", "push"),
        Binding("c", "close", "close"),
        Binding("d", "discuss", "discuss"),
        Binding("r", "reopen", "revote"),
        Binding("v", "reveal", "reveal"),
        Binding("n", "next", "next"),
        Binding("slash", "filter", "filter", key_display="/"),
        Binding("q", "end", "end class"),
    ]

    def __init__(self, server: ClassServer, join_address: str, *, trace_list: bool = True):
        super().__init__()
        self.server = server
        self.join_address = join_address
        self.sources: list[Source] = quick_sources()
        self.trace_list = trace_list
        self._dirty = True
        self._quit_asked = 0.0
        self.server.listen(self._changed)

    @property
    def join_command(self) -> str:
        return f"attn-tutor class join {self.join_address} {self.server.session.key}"

    def compose(self) -> ComposeResult:
        with Vertical(id="join"):
            yield Static(safe.assemble(("Join: ", "bold"), (self.join_command, "bold")), id="join-line")
            yield Digits(self.server.session.key, id="key")
        with Horizontal():
            with Vertical(id="picker"):
                yield Input(placeholder="type to filter (/)", id="filter")
                yield OptionList(*self._options(""), id="sources")
            with VerticalScroll(id="board"):
                yield Static(id="status")
                yield Static(id="histogram")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        try:
            await self.server.start()
        except OSError as exc:  # the port was taken between the check and now
            self.exit(f"error: cannot host the class: {exc.strerror or exc}")
            return
        self.set_interval(REFRESH, self._refresh_if_dirty)
        self.set_interval(1.0, self._tick)
        self.query_one("#sources", OptionList).focus()
        if self.trace_list:
            self._load_traces()
        self._draw()

    async def on_unmount(self) -> None:
        await self.server.stop()  # students' clients see the connection close

    # ---------------------------------------------------------------- the picker

    def _options(self, query: str) -> list[Option]:
        q = query.casefold().strip()
        out = []
        for s in self.sources:
            if not q or q in f"{s.ref} {s.title} {s.words} {s.topic}".casefold():
                label = safe.text(f"[{s.kind}] {s.title}", lines=False)
                label.no_wrap, label.overflow = True, "ellipsis"
                out.append(Option(label, id=s.ref))
        return out

    def on_input_changed(self, event: Input.Changed) -> None:
        listing = self.query_one("#sources", OptionList)
        listing.clear_options()
        listing.add_options(self._options(event.value))
        if listing.option_count:
            listing.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#sources", OptionList).focus()

    def key_escape(self) -> None:
        """Esc in the filter: back to the list (its keys work again)."""
        self.query_one("#sources", OptionList).focus()

    @work(thread=True, exclusive=True, group="traces")
    def _load_traces(self) -> None:
        found = trace_sources()  # builds every trace once: off the screen's loop
        self.call_from_thread(self._add_sources, found)

    def _add_sources(self, found: list[Source]) -> None:
        self.sources += found
        self.on_input_changed(Input.Changed(self.query_one("#filter", Input),
                                            self.query_one("#filter", Input).value))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.run_worker(self.action_push())

    # ---------------------------------------------------------------- the board

    def _changed(self, what: str, who: tuple[str, ...]) -> None:
        self._dirty = True

    def _refresh_if_dirty(self) -> None:
        if self._dirty:
            self._draw()

    def _tick(self) -> None:
        if self.server.room.current is not None and self.server.room.current.state == "open":
            self._draw()

    def _draw(self) -> None:
        self._dirty = False
        snap = self.server.room.snapshot()
        self.query_one("#status", Static).update(board.status(snap))
        width = max(30, self.query_one("#board").size.width - 2)
        self.query_one("#histogram", Static).update(board.histogram(snap, width))
        self.refresh_bindings()

    # ---------------------------------------------------------------- controls

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        cur = self.server.room.current
        state = cur.state if cur else "waiting"
        allowed = {
            "close": state == "open",
            "discuss": state in ("open", "closed"),
            "reopen": state in ("closed", "discuss") and cur is not None and cur.round == 1,
            "reveal": state in ("open", "closed", "discuss"),
            "next": cur is not None,
        }
        return allowed.get(action, True)

    async def action_push(self) -> None:
        listing = self.query_one("#sources", OptionList)
        option = listing.highlighted_option
        if option is None or option.id is None:
            self.notify("Pick a question first.", severity="warning")
            return
        try:
            await self.server.push(option.id)
        except (ValueError, KeyError) as exc:
            self.notify(safe.clean(str(exc)), severity="error")
        self._draw()

    async def _step(self, state: str) -> None:
        try:
            await self.server.set_state(state)
        except ValueError as exc:
            self.notify(safe.clean(str(exc)), severity="warning")
        self._draw()

    async def action_close(self) -> None:
        await self._step("closed")

    async def action_discuss(self) -> None:
        await self._step("discuss")

    async def action_reopen(self) -> None:
        await self._step("open")

    async def action_reveal(self) -> None:
        await self._step("revealed")

    async def action_next(self) -> None:
        await self._step("done")
        listing = self.query_one("#sources", OptionList)
        listing.action_cursor_down()
        listing.focus()

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    async def action_end(self) -> None:
        now = time.monotonic()
        if now - self._quit_asked > 3:
            self._quit_asked = now
            self.notify("Press q again to end the class (students are disconnected).")
            return
        await self.server.end()
        self.exit("ended")
