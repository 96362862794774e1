"""The class protocol: JSON messages between the instructor's server and the students' clients.

One message per WebSocket text frame, a JSON object with ``"v"`` (:data:`VERSION`) and
``"type"``. ``docs/class-protocol.md`` is the reader's description; this module is the rule:
what a client may send (:data:`CLIENT_FIELDS`) is checked here, field by field, before the
server looks at it, and the server's messages are built here (:func:`message`).

Pure Python (standard library only), so the client and the tests load it without textual,
numpy or the engine.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
from typing import Any

from tutor.limits import MAX_ANSWER
from tutor.render.safe import clean

VERSION = 1
"""Bumped when a message changes meaning; a client of another version is refused."""

MAX_MESSAGE = 4096
"""Bytes in one frame; a bigger frame closes the connection (code 1009)."""
MAX_NAME = 32
"""Characters in a display name (longer names are cut)."""
PATH = "/class"
"""The WebSocket's path; the session key comes as ``?key=`` (checked before the upgrade)."""

KEY_ALPHABET = "0123456789ABCDEF"
KEY_GROUPS = 3
KEY_GROUP = 4
"""A session key is three groups of four hexadecimal digits (48 bits), e.g. ``3FA9-C01E-77B2``:
easy to read off a projector and to type (case and dashes do not matter)."""

STATES = ("waiting", "open", "closed", "discuss", "revealed")
"""The current question's state: ``waiting`` (none pushed), ``open`` (a vote is on),
``closed`` (voting closed), ``discuss`` (closed, talk to your neighbour), ``revealed``."""

CLIENT_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    # message type -> {field: accepted JSON types}; every field is required, no other field allowed
    "hello": {"v": (int,), "type": (str,), "name": (str,), "student": (str,)},
    "answer": {"v": (int,), "type": (str,), "q": (int,), "round": (int,), "seq": (int,),
               "text": (str,)},
    "bye": {"v": (int,), "type": (str,)},
}
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{0,32}$")


class ProtocolError(ValueError):
    """A client message that breaks the protocol; ``code`` is the error code sent back."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def new_key() -> str:
    """A fresh session key, ``XXXX-XXXX-XXXX``."""
    raw = "".join(secrets.choice(KEY_ALPHABET) for _ in range(KEY_GROUPS * KEY_GROUP))
    return "-".join(raw[i:i + KEY_GROUP] for i in range(0, len(raw), KEY_GROUP))


def normal_key(text: str) -> str:
    """A key as typed (any case, with or without dashes or spaces) in its printed form."""
    raw = re.sub(r"[\s-]", "", text or "").upper()
    return "-".join(raw[i:i + KEY_GROUP] for i in range(0, len(raw), KEY_GROUP))


def same_key(given: str | None, key: str) -> bool:
    """Whether ``given`` is the session ``key``, compared in constant time."""
    return given is not None and hmac.compare_digest(normal_key(given).encode(), key.encode())


def clean_name(name: str) -> str:
    """A display name fit for any screen: control removed, one line, at most :data:`MAX_NAME`."""
    return " ".join(clean(name, lines=False).split())[:MAX_NAME]


def clean_answer(text: str) -> str:
    """An answer fit for any screen and the store: control removed, one line, trimmed."""
    return " ".join(clean(text, lines=False).split())[:MAX_ANSWER]


def parse_client(raw: str | bytes) -> dict[str, Any]:
    """A client frame as a checked message.

    Raises:
        ProtocolError: not JSON, not an object, another version, an unknown type, a field
            missing, extra or of the wrong type, a number out of range, an answer too long.
    """
    if isinstance(raw, bytes):
        raise ProtocolError("bad-message", "send text frames of JSON, not binary")
    try:
        msg = json.loads(raw)
    except (ValueError, RecursionError):
        raise ProtocolError("bad-message", "not JSON") from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad-message", "a message is a JSON object")
    if msg.get("v") != VERSION or isinstance(msg.get("v"), bool):
        raise ProtocolError("version", f"this class speaks protocol version {VERSION}")
    fields = CLIENT_FIELDS.get(msg.get("type"))  # type: ignore[arg-type]
    if fields is None:
        raise ProtocolError("bad-message", "unknown message type; expected one of: "
                            + ", ".join(CLIENT_FIELDS))
    extra = sorted(set(msg) - set(fields))
    missing = sorted(set(fields) - set(msg))
    if extra or missing:
        raise ProtocolError("bad-message", f"{msg['type']}: " + (
            f"unknown field {extra[0]!r}" if extra else f"missing field {missing[0]!r}"))
    for name, types in fields.items():
        value = msg[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ProtocolError("bad-message", f"{msg['type']}: field {name!r} has the wrong type")
    if msg["type"] == "answer":
        if not (0 < msg["q"] < 1_000_000 and msg["round"] in (1, 2) and 0 < msg["seq"] < 2**31):
            raise ProtocolError("bad-message", "answer: q, round or seq out of range")
        if len(msg["text"]) > MAX_ANSWER:
            raise ProtocolError("too-long", f"an answer is at most {MAX_ANSWER} characters")
    if msg["type"] == "hello":
        if not _TOKEN.match(msg["student"]):
            raise ProtocolError("bad-message", "hello: student is a token the server gave")
        if len(msg["name"]) > 4 * MAX_NAME:
            raise ProtocolError("too-long", f"a name is at most {MAX_NAME} characters")
    return msg


def message(type_: str, **fields: Any) -> str:
    """A server message as its JSON frame."""
    return json.dumps({"v": VERSION, "type": type_, **fields}, ensure_ascii=False,
                      separators=(",", ":"))


def hello(name: str, student: str = "") -> str:
    """The client's first message: its display name ("" = anonymous) and its token, if any."""
    return message("hello", name=name, student=student)


def answer(q: int, round_: int, seq: int, text: str) -> str:
    """A client's answer to vote ``round_`` of question ``q``; ``seq`` grows per answer."""
    return message("answer", q=q, round=round_, seq=seq, text=text)
