"""What the student's screens say about each class message: one set of words for the line
front end (:mod:`tutor.classroom.join_plain`) and the full screen (:mod:`tutor.classroom.join_app`).
Returns plain strings; each front end cleans them on the way to the terminal."""

from __future__ import annotations

from tutor.classroom.client import Event


def describe(event: Event, question: Event | None) -> list[str]:
    """The lines a server message (or a connection note) prints."""
    kind = event.get("type")
    if kind == "connecting":
        return ["Connecting…"] if event.get("attempt", 0) == 0 else []
    if kind == "disconnected":
        return ["Connection lost; trying again…"]
    if kind == "ended":
        return ["", "The instructor has ended the class."]
    if kind == "connected":
        who = event.get("name") or "anonymous"
        return [f"Joined the class as {who}. Wait for the instructor's question."]
    if kind == "question":
        lines = ["", f"Question {event.get('q')}: {event.get('title', '')}", str(event.get("prompt", ""))]
        for i, option in enumerate(event.get("options") or []):
            lines.append(f"  {chr(ord('a') + i)}) {option}")
        lines.append(str(event.get("instructions", "")))
        lines += _state_lines(event)
        yours = event.get("yours")
        if isinstance(yours, dict):
            lines.append(f"Your answer (vote {yours.get('round')}): {yours.get('text')}")
        return lines
    if kind == "state":
        return _state_lines(event, question)
    if kind == "ack":
        if event.get("replay"):
            return []
        return [f"Received: {event.get('text')} (vote {event.get('round')}). "
                "You may change it until voting closes."]
    if kind == "invalid":
        return [f"Not an answer: {event.get('hint')}"]
    if kind == "error":
        return [f"The class says: {event.get('message')}"]
    if kind == "reveal":
        lines = [""]
        yours = event.get("yours")
        if isinstance(yours, dict):
            lines += _verdict(yours)
            first = yours.get("first")
            if isinstance(first, dict):
                lines += ["Your first vote:"] + [f"  {line}" for line in _verdict(first)]
        else:
            lines.append("You did not answer this one.")
        lines.append(f"The answer: {event.get('answer')}")
        lines += [f"  {line}" for line in event.get("explanation") or []]
        return lines
    return []


def _verdict(vote: Event) -> list[str]:
    verdict = "right" if vote.get("correct") else "not right"
    lines = [f"You answered {vote.get('text')} (vote {vote.get('round')}): {verdict}."]
    if vote.get("title"):
        lines.append(f"  The mistake: {vote['title']}.")
    if vote.get("feedback"):
        lines.append(f"  {vote['feedback']}")
    return lines


def _state_lines(event: Event, question: Event | None = None) -> list[str]:
    state, round_ = event.get("state"), event.get("round")
    if state == "open":
        if round_ == 2 and question is not None:
            return ["Vote 2 is open: answer again (your first vote is kept as well)."]
        return [f"Vote {round_} is open: type your answer."]
    return {"closed": ["Voting is closed."],
            "discuss": ["Voting is closed: discuss your answer with your neighbour."],
            "revealed": ["The answer is revealed."],
            "waiting": ["", "Waiting for the next question…"]}.get(str(state), [])
