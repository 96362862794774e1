"""The instructor's board as Rich text: the status line and the two-vote histogram.

Plain functions of a :class:`~tutor.classroom.room.Snapshot`, so the host screen, its tests
and anything else draw the same thing. Every data string (titles, options, the mistake
behind a distractor) goes through :mod:`tutor.render.safe`.
"""

from __future__ import annotations

from rich.text import Text

from tutor.classroom.questions import PER_STUDENT
from tutor.classroom.room import Bar, Snapshot
from tutor.render import safe

STATE_WORDS = {"waiting": "no question on the board", "open": "vote {round} open",
               "closed": "voting closed", "discuss": "discuss with your neighbour",
               "revealed": "answer revealed"}
BLOCK = "█"


def clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def status(snap: Snapshot) -> Text:
    """``Q2 · vote 2 open · 25 online (27 joined) · answered 24 | 18 · 1:42``."""
    words = STATE_WORDS.get(snap.state, snap.state).format(round=snap.round)
    people = f"{snap.online} online" + (f" ({snap.joined} joined)" if snap.joined != snap.online else "")
    if snap.state == "waiting":
        return safe.assemble((f"{people} · ", ""), (words, "dim"))
    answered = f"answered {snap.answered[0]}" + (f" | {snap.answered[1]}" if snap.round == 2 else "")
    own = " (numbers per student)" if snap.ref.split(":", 1)[0] in PER_STUDENT else ""
    return safe.assemble((f"Q{snap.number} ", "bold"), (snap.title, "bold"), (own, "dim"),
                         (f"\n{words} · {people} · {answered} · {clock(snap.seconds)}", ""))


def histogram(snap: Snapshot, width: int = 76) -> Text:
    """Each bucket (or option) with its count in vote 1 and vote 2 side by side; the right
    one marked ✓; under a multiple-choice distractor, the mistake behind it."""
    if not snap.bars:
        return Text("No answers yet." if snap.state != "waiting" else
                    "Pick a question on the left and press p to push it.", style="dim")
    total = [max(1, snap.answered[0]), max(1, snap.answered[1])]
    votes = 2 if snap.round == 2 else 1
    label_w = max(12, min(34, width - 2 - votes * (11 + 10)))  # leave each vote a bar of 10+
    bar_w = max(4, (width - label_w - 2) // votes - 11)
    out = Text()
    head = f"{'':<{label_w}}  vote 1" + (" " * (bar_w + 5) + "vote 2" if snap.round == 2 else "")
    out.append(head.rstrip() + "\n", style="dim")
    for bar in snap.bars:
        out.append_text(_row(bar, label_w, bar_w, total, snap.round == 2))
        if bar.why:  # the mistake behind a distractor, whole (it wraps)
            out.append_text(safe.text(f"   {' '.join(bar.why.split())}\n", "dim italic"))
    return out


def _row(bar: Bar, label_w: int, bar_w: int, total: list[int], both: bool) -> Text:
    mark = "✓ " if bar.right else "  "
    name = bar.bucket + ") " + bar.title if len(bar.bucket) == 1 else bar.title
    parts: list[tuple[str, str]] = [(mark, "green bold" if bar.right else ""),
                                     (f"{_cut(name, label_w - 2):<{label_w - 2}}", "")]
    for i in range(2 if both else 1):
        n = bar.counts[i]
        fill = round(bar_w * n / total[i])
        parts += [(f" {n:>3} {round(100 * n / total[i]):>3}% ", "bold"),
                  (BLOCK * fill, "green" if bar.right else "red"), (" " * (bar_w - fill), "")]
    parts.append(("\n", ""))
    return safe.assemble(*parts)


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:max(0, n - 1)] + "…"
