"""``attn-tutor class join --plain``: the student's side in line mode.

Each server message becomes a few lines (:func:`tutor.classroom.words.describe`); each line typed while a vote
is
open is an answer (a letter or number picks an option). ``:quit`` or end of input leaves.
Every line printed goes through :func:`tutor.render.safe.clean`.
"""

from __future__ import annotations

import asyncio
import sys
import threading

from tutor.classroom.client import Event, StudentClient, choice_text, keep_review
from tutor.classroom.protocol import clean_name
from tutor.classroom.words import describe
from tutor.marking import command_word
from tutor.render.safe import clean

SETTLE = 5.0
"""Seconds the line mode waits, at the end of its input, for its last answer to be received."""


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
            if line is None:  # end of input (answers piped in): leave once they are through
                await _settle(client, running)
                break
            if command_word(line) == "quit":
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
    failed = running.exception() if running.done() and not running.cancelled() else None
    if failed is not None:
        raise failed  # the class refused us while we were leaving


async def _settle(client: StudentClient, running: asyncio.Task, timeout: float = SETTLE) -> None:
    """Wait until the client has joined and its last answer is acknowledged (or refused)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end and not running.done():
        if client.ws is not None and client.token and client.pending is None:
            return
        await asyncio.sleep(0.05)
