"""Edit a trace's inputs: one field per input, checked by building the trace itself.

A bad value is highlighted and explained under its field; nothing changes on the trace
screen until every field is valid, so the last good trace stays on screen.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from engine.trace import InputSpec
from tutor.errors import UserError
from tutor.inputs import format_value, parse_value
from tutor.render.safe import assemble, text


def value_to_text(value: Any) -> str:
    """The form's text for a value, in the same syntax ``--set`` accepts ("" for unset)."""
    return "" if value is None else format_value(value, digits=6)


class TraceInputs(ModalScreen[dict[str, Any] | None]):
    """Dismisses with the overrides that differ from the defaults (or None on cancel)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "apply", "Apply"),
        Binding("ctrl+r", "reset", "Defaults"),
    ]

    def __init__(self, name: str, specs: list[InputSpec], current: dict[str, Any],
                 overrides: dict[str, Any] | None = None) -> None:
        """``current`` holds the trace's resolved inputs; an optional input shows only what the
        student set (``overrides``), never the value the builder derived for it."""
        super().__init__()
        self.trace_name = name
        self.specs = specs
        self.current = current
        self.overrides = dict(overrides or {})

    def _initial(self, spec: InputSpec) -> Any:
        if spec.optional:
            return self.overrides.get(spec.name)
        return self.current.get(spec.name, spec.default)

    def compose(self) -> ComposeResult:
        with Vertical(id="inputs-box"):
            yield Static(assemble((f"Inputs of {self.trace_name}", "bold"),
                                  ("  matrices as rows split by ';' — e.g. 1, 0; 0, 1 · "
                                   "ctrl+s apply · ctrl+r defaults · Esc cancel", "dim")))
            with VerticalScroll(id="inputs-fields"):
                for spec in self.specs:
                    optional = (
                        " (optional: leave empty to let the trace work it out)" if spec.optional else ""
                    )
                    # a Static, not a Label: a long description wraps instead of being cut
                    yield Static(assemble((spec.name, "bold"), (f"  {spec.description} — "
                                                                f"{spec.expected()}{optional}", "dim")),
                                 classes="field-label")
                    yield Input(value_to_text(self._initial(spec)), id=f"in-{spec.name}")
                    yield Static("", id=f"err-{spec.name}", classes="field-error")
            yield Static("", id="inputs-error", classes="field-error")
            with Horizontal(id="inputs-buttons"):
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Defaults", id="reset")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        {"apply": self.action_apply, "reset": self.action_reset, "cancel": self.action_cancel}[
            event.button.id or ""
        ]()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_apply()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_reset(self) -> None:
        for spec in self.specs:
            self.query_one(f"#in-{spec.name}", Input).value = value_to_text(spec.default)
        self._clear_errors()

    def _clear_errors(self) -> None:
        for spec in self.specs:
            self.query_one(f"#in-{spec.name}", Input).remove_class("-invalid")
            self.query_one(f"#err-{spec.name}", Static).update("")
        self.query_one("#inputs-error", Static).update("")

    def _flag(self, name: str | None, message: str) -> None:
        if name is not None and any(s.name == name for s in self.specs):
            field = self.query_one(f"#in-{name}", Input)
            field.add_class("-invalid")
            self.query_one(f"#err-{name}", Static).update(text(message))
            field.focus()
        else:
            self.query_one("#inputs-error", Static).update(text(message))

    def action_apply(self) -> None:
        from engine.traces import build  # looked up per call: tests replace it

        self._clear_errors()
        overrides: dict[str, Any] = {}
        for spec in self.specs:
            text = self.query_one(f"#in-{spec.name}", Input).value
            if text.strip() == value_to_text(spec.default) or (spec.optional and not text.strip()):
                continue
            try:
                value = parse_value(text, where=f"input {spec.name}")
                spec.coerce(value)
            except (UserError, ValueError) as exc:
                self._flag(spec.name, str(exc))
                return
            overrides[spec.name] = value
        try:
            build(self.trace_name, overrides)
        except ValueError as exc:
            message = str(exc).splitlines()[0]
            name = message.removeprefix("input ").split(":", 1)[0] if message.startswith("input ") else None
            self._flag(name, message)
            return
        self.dismiss(overrides)
