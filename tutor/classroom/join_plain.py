"""``attn-tutor class join --plain``: the student's side in line mode.

Each server message becomes a few lines (:func:`describe`); each line typed while a vote is
open is an answer (a letter or number picks an option). ``:quit`` or end of input leaves.
Every line printed goes through :func:`tutor.render.safe.clean`.
"""

from __future__ import annotations

import asyncio
import sys
import threading

from tutor.classroom.client import Event, StudentClient, choice_text, keep_review
from tutor.classroom.protocol import clean_name
from tutor.quiz.marking import LETTERS
from tutor.render.safe import clean

QUIT = (":quit", ":q")


def describe(event: Event, question: Event | None) -> list[str]:
    """The lines a server message (or a connection note) prints."""
    kind = event.get("type")
    if kind == "connecting":
        return ["Connecting…"] if event.get("attempt", 0) == 0 else []
    if kind == "disconnected":
        return ["Connection lost; trying again…"]
    if kind == "connected":
        who = event.get("name") or "anonymous"
        return [f"Joined the class as {who}. Wait for the instructor's question."]
    if kind == "question":
        lines = ["", f"Question {event.get('q')}: {event.get('title', '')}", str(event.get("prompt", ""))]
        for i, option in enumerate(event.get("options") or []):
            lines.append(f"  {LETTERS[i] if i < len(LETTERS) else i + 1}) {option}")
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
        lines = ["", f"The answer: {event.get('answer')}"]
        lines += [f"  {line}" for line in event.get("explanation") or []]
        yours = event.get("yours")
        if isinstance(yours, dict):
            verdict = "right" if yours.get("correct") else "not right"
            lines.append(f"You answered {yours.get('text')} (vote {yours.get('round')}): {verdict}.")
            if yours.get("title"):
                lines.append(f"  The mistake: {yours['title']}.")
            if yours.get("feedback"):
                lines.append(f"  {yours['feedback']}")
        else:
            lines.append("You did not answer this one.")
        return lines
    return []


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


def run_plain(address: str, key: str, name: str | None) -> None:
    """Ask for a name if none was given, then follow the class until ``:quit`` or end of input."""
    if name is None:
        print("Your name for the class (Enter: anonymous): ", end="", flush=True)
        line = sys.stdin.readline()
        name = line.strip()
    asyncio.run(_follow(address, key, clean_name(name)))


async def _follow(address: str, key: str, name: str) -> None:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:  # stdin blocks: a thread reads it
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    def show(event: Event) -> None:
        for line in describe(event, client.question):
            print(clean(line), flush=True)
        if event.get("type") == "reveal":
            problem = keep_review(event)
            if problem:
                print(clean(problem), flush=True)

    client = StudentClient(address, key, name, show)
    threading.Thread(target=read, daemon=True).start()
    running = asyncio.create_task(client.run())
    try:
        while True:
            getting = asyncio.create_task(lines.get())
            done, _ = await asyncio.wait({getting, running}, return_when=asyncio.FIRST_COMPLETED)
            if running in done:
                getting.cancel()
                running.result()  # JoinError: the class refused us
                return
            line = getting.result()
            if line is None or line.strip() in QUIT:
                break
            text = line.strip()
            if not text:
                continue
            q = client.question
            if q is not None and q.get("kind") == "choice":
                text = choice_text(q, text)
            if not await client.answer(text):
                print("No vote is open right now.", flush=True)
    finally:
        await client.stop()
        running.cancel()
