"""``attn-tutor class join``: the student's screen (Textual).

A name first (empty: anonymous) unless ``--name``/``--anonymous`` gave one; then each
question as the instructor pushes it: the prompt, the options to pick (multiple choice) or a
box to type into, and what the class received. At reveal: the answer, the explanation and
what the student's own answer was (a named mistake when the catalogue knows it). The client
(:class:`~tutor.classroom.client.StudentClient`) runs on the app's loop and reconnects by
itself; its messages are worded by :func:`tutor.classroom.words.describe`, every data string
shown as ``Text``.
"""

from __future__ import annotations

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from tutor.classroom.client import Event, JoinError, StudentClient, keep_review
from tutor.classroom.protocol import clean_name
from tutor.classroom.words import describe
from tutor.render import safe


class JoinApp(App[str]):
    """The student's class screen; see the module docstring."""

    TITLE = "attn-tutor class"
    CSS = """
    #status { height: auto; padding: 0 1; background: $boost; }
    #question { height: 1fr; padding: 0 1; }
    #bottom { height: auto; }
    #choices { height: auto; max-height: 8; }
    #answer { height: 3; }
    #received { height: auto; padding: 0 1; }
    """
    BINDINGS = [Binding("ctrl+q", "leave", "leave", priority=True)]

    def __init__(self, address: str, key: str, name: str | None):
        super().__init__()
        self.address, self.key = address, key
        self.name_given = name
        self.client: StudentClient | None = None
        self.sent: tuple[int, str] | None = None
        """The last answer the class acknowledged (vote, text)."""

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with VerticalScroll(id="question"):
            yield Static(id="prompt")
            yield Static(id="feedback")
        with Vertical(id="bottom"):
            yield Static(id="received")
            yield OptionList(id="choices")
            yield Input(id="answer")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#choices").display = False
        if self.name_given is None:
            self._status("Type your name for the class and press Enter (empty: anonymous).")
            box = self.query_one("#answer", Input)
            box.placeholder = "your name"
            box.focus()
        else:
            self._start(self.name_given)

    # ---------------------------------------------------------------- connection

    def _start(self, name: str) -> None:
        self.client = StudentClient(self.address, self.key, clean_name(name), self._event)
        box = self.query_one("#answer", Input)
        box.value, box.placeholder = "", "your answer (Enter sends it)"
        box.disabled = True
        self._run_client()

    @work(exclusive=True, group="client")
    async def _run_client(self) -> None:
        assert self.client is not None
        try:
            await self.client.run()
        except JoinError as exc:
            self.exit(f"attn-tutor: error: {exc}")

    def _event(self, event: Event) -> None:
        kind = event.get("type")
        if kind in ("connecting", "disconnected", "connected"):
            lines = describe(event, None)
            if lines:
                self._status(lines[0])
        elif kind == "question":
            self._show_question(event)
        elif kind == "state":
            self._show_state()
        elif kind in ("ack", "invalid", "error"):
            lines = describe(event, None)
            if kind == "ack" and not event.get("replay"):
                self.sent = (int(event.get("round", 1)), str(event.get("text", "")))
            if lines:
                self.query_one("#received", Static).update(safe.text(lines[0]))
        elif kind == "reveal":
            self._show_reveal(event)
            self._keep(event)
        elif kind == "ended":
            self._status("The instructor has ended the class. Ctrl+Q leaves.")
            self.query_one("#answer", Input).display = False
            self.query_one("#choices", OptionList).display = False

    @work(thread=True, group="store")
    def _keep(self, event: Event) -> None:
        problem = keep_review(event)
        if problem:
            self.call_from_thread(self.notify, safe.clean(problem), severity="warning")

    # ---------------------------------------------------------------- drawing

    def _status(self, line: str) -> None:
        self.query_one("#status", Static).update(safe.text(line, "bold"))

    def _show_question(self, event: Event) -> None:
        lines = [f"Question {event.get('q')}: {event.get('title', '')}", "",
                 str(event.get("prompt", "")), "", str(event.get("instructions", ""))]
        self.query_one("#prompt", Static).update(safe.text("\n".join(lines)))
        self.query_one("#feedback", Static).update("")
        choices = self.query_one("#choices", OptionList)
        choices.clear_options()
        options = event.get("options") or []
        choices.add_options([Option(safe.text(f"{chr(97 + i)}) {o}", lines=False), id=str(o))
                             for i, o in enumerate(options)])
        yours = event.get("yours")
        self.sent = ((int(yours.get("round", 1)), str(yours.get("text", "")))
                     if isinstance(yours, dict) else None)
        self._show_state()

    def _show_state(self) -> None:
        q = self.client.question if self.client else None
        box = self.query_one("#answer", Input)
        choices = self.query_one("#choices", OptionList)
        if q is None:
            self._status("Waiting for the next question…")
            self.query_one("#prompt", Static).update("")
            self.query_one("#feedback", Static).update("")
            self.query_one("#received", Static).update("")
            self.sent = None
            box.display, choices.display = False, False
            return
        lines = describe({"type": "state", "state": q.get("state"), "round": q.get("round")}, q)
        self._status(f"Question {q.get('q')} · " + (lines[0] if lines else str(q.get("state"))))
        is_open = q.get("state") == "open"
        choice = q.get("kind") == "choice"
        choices.display = choice
        box.display = not choice and is_open
        box.disabled = choices.disabled = not is_open
        received = self.query_one("#received", Static)
        if self.sent is not None:
            round_, text = self.sent
            more = " You may change it until voting closes." if is_open and round_ == q.get("round") else ""
            received.update(safe.text(f"Your answer (vote {round_}): {text}.{more}"))
        else:
            received.update("")
        if is_open:
            (choices if choice else box).focus()

    def _show_reveal(self, event: Event) -> None:
        lines = describe(event, None)
        self.query_one("#feedback", Static).update(safe.text("\n".join(lines)))
        self._status(f"Question {event.get('q')} · the answer is revealed")
        self.query_one("#answer", Input).display = False
        self.query_one("#choices", OptionList).disabled = True
        self.query_one("#received", Static).update("")
        self.query_one("#feedback", Static).scroll_visible(animate=False, top=True)

    # ---------------------------------------------------------------- answering

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.client is None:
            self._start(event.value)
            return
        text = event.value.strip()
        if text and not await self.client.answer(text):
            self.notify("No vote is open right now.")
        event.input.value = ""

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.client is not None and event.option.id is not None:
            if not await self.client.answer(event.option.id):
                self.notify("No vote is open right now.")

    async def action_leave(self) -> None:
        if self.client is not None:
            await self.client.stop()
        self.exit("left")


def run_join_app(address: str, key: str, name: str | None) -> None:
    """Run the student's screen; a refusal (wrong key, full) is one line after it closes."""
    result = JoinApp(address, key, name).run()
    if result and result.startswith("attn-tutor: error:"):
        raise JoinError(result.removeprefix("attn-tutor: error: "))
