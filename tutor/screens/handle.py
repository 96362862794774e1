"""The app as the tutor's screens and widgets see it, typed once.

``self.app`` is typed as Textual's ``App``, which knows nothing of the progress store or the
tutor's navigation; :func:`tutor_app` is the one place that says it is a
:class:`~tutor.app.TutorApp`, so no screen needs a ``type: ignore`` to reach them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from tutor.app import TutorApp


def tutor_app(node: DOMNode) -> TutorApp:
    """The running :class:`~tutor.app.TutorApp` of ``node`` (a screen or a widget)."""
    return cast("TutorApp", node.app)
