"""The app as the tutor's screens and widgets see it, typed once.

``self.app`` is typed as Textual's ``App``, which knows nothing of the progress store or the
tutor's navigation; :func:`tutor_app` is the one place that says it is a
:class:`~tutor.app.TutorApp`, so no screen needs a ``type: ignore`` to reach them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from textual.app import App

    from tutor.app import TutorApp


class InApp(Protocol):
    """Anything Textual runs inside an app: a screen, a widget, a command-palette provider."""

    @property
    def app(self) -> App[Any]: ...


def tutor_app(node: InApp) -> TutorApp:
    """The running :class:`~tutor.app.TutorApp` of ``node`` (a screen, a widget, a provider)."""
    return cast("TutorApp", node.app)
