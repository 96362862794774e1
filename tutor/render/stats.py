"""Progress (``attn-tutor stats``) as text and as Rich tables: the numbers of
:func:`tutor.quiz.progress.compute`, written two ways from one place."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from tutor.content import LESSON_IDS
from tutor.render.numbers import bar, percent
from tutor.render.safe import clean, text


def render_text(data: dict[str, Any]) -> list[str]:
    """The human-readable report, one string per line."""
    d = data["due"]
    out = [f"Due now: {d['now']}   due in the next 24 h: {d['next_24h']}   "
           f"seen {d['seen']} of {d['total']} questions"]
    out.append("")
    out.append(f"{'Topic':<22}{'seen':>9}{'accuracy':>10}{'mastery':>9}{'due':>5}")
    for rows, title in ((data["topics"], None), (data["exam_topics"], "Exam topics")):
        if title:
            out.append("")
            out.append(title)
        for r in rows:
            acc = percent(r["accuracy"])
            mastery = percent(r["mastery"])
            out.append(f"{r['id']:<22}{r['seen']:>4}/{r['questions']:<4}{acc:>10}{mastery:>9}"
                       f"{r['due']:>5}")
    out.append("")
    out.append("Mastery = mean recall probability now (FSRS), unseen questions counting 0.")
    daily = data["daily"]
    bar = " ".join(str(x["answers"]) for x in daily["days"])
    out.append(f"{daily_goal(daily)}; per day, oldest first: {bar}")
    out += [""] + mistakes_text(data.get("mistakes"))
    mocks = data["mock_exams"]
    out.append("")
    if not mocks:
        out.append("Mock exams: none yet (attn-tutor quiz --mode mock).")
    else:
        out.append("Mock exams:")
        for m in mocks[-10:]:
            score = percent(m["score"])
            when = datetime.fromisoformat(m["started_at"].replace("Z", "+00:00")).astimezone()
            out.append(f"  {when:%Y-%m-%d %H:%M}  {m['correct']}/{m['questions']}"
                       f" ({score})  {m['status']}")
    out.append("")
    if not data.get("papers"):
        out.append("Papers: none yet (attn-tutor paper).")
    else:
        out.append("Papers (structured questions, marks):")
        for p in data["papers"][-10:]:
            when = datetime.fromisoformat(p["started_at"].replace("Z", "+00:00")).astimezone()
            out.append(f"  {when:%Y-%m-%d %H:%M}  {p['earned']}/{p['marks']} ({percent(p['score'])})"
                       f"  {p['status']}")
        out.append("  by topic: " + ", ".join(f"{t['id']} {t['earned']}/{t['marks']}"
                                            for t in data["paper_topics"]))
    out += [""] + practice_text(data.get("practice"))
    return [clean(line, lines=False) for line in out]  # ids and statuses come from the file


SHOWN_MISTAKES = 8
"""Mistakes listed in the report (the JSON has them all)."""


def mistakes_text(mistakes: list[dict[str, Any]] | None) -> list[str]:
    """The student's mistakes, commonest first: how often, when last, what to practise."""
    if not mistakes:
        return ["Mistakes: none named yet (a wrong number the catalogue explains is named here)."]
    recurring = sum(1 for m in mistakes if m["recurring"])
    out = [f"Mistakes named in your answers ({recurring} recurring; "
           f"{mistakes[0]['aimed']} aims problems at them):"]
    for m in mistakes[:SHOWN_MISTAKES]:
        when = datetime.fromisoformat(m["last"].replace("Z", "+00:00")).astimezone()
        out.append(f"  {m['times']:>3}×  {m['title']}  (last {when:%Y-%m-%d})")
        out.append(f"        read §{_section(m['lesson'])} {m['lesson']}, \"{m['heading']}\""
                   + (f"; practise: {m['practise']}" if m["practise"] else ""))
    if len(mistakes) > SHOWN_MISTAKES:
        out.append(f"  and {len(mistakes) - SHOWN_MISTAKES} more (attn-tutor stats --json lists them all)")
    return out


def _section(lesson: str) -> str:
    return str(LESSON_IDS.index(lesson) + 1) if lesson in LESSON_IDS else "?"


def practice_text(practice: dict[str, Any] | None) -> list[str]:
    """Practice traces by trace (those practised) and by level, as lines."""
    if not practice or not practice["practised"]:
        return ["Practice traces: none yet (attn-tutor trace NAME --practice)."]
    out = [f"Practice traces: {practice['practised']} of {len(practice['traces'])} practised, "
           f"{practice['due_now']} due now.",
           f"  {'trace':<22}{'level':>7}  {'stage':<6}{'done':>6}{'clean':>6}{'blanks':>9}{'why':>8}"]
    for t in practice["traces"]:
        if t["practices"] or t["blanks"] or t["prompts"]:
            out.append(f"  {t['trace']:<22}{t['level']:>4}/{t['top']:<2}  {t['stage']:<6}"
                       f"{t['practices']:>6}{t['clean']:>6}{_ratio(t['blanks_right'], t['blanks']):>9}"
                       f"{_ratio(t['prompts_right'], t['prompts']):>8}")
    out.append("  by level: " + ", ".join(
        f"{r['level']}: {_ratio(r['blanks_right'], r['blanks'])} blanks, "
        f"{_ratio(r['prompts_right'], r['prompts'])} why" for r in practice["by_level"]))
    return out


def _ratio(right: int, n: int) -> str:
    return f"{right}/{n}" if n else "-"


def daily_goal(daily: dict[str, Any]) -> str:
    """``Daily goal: 12 answers/day over the last 7 days (goal 20, below target)``; over the
    days so far for a student in their first week (day one's count as it is: ``1 answer
    today``), and no verdict before the first answer."""
    counted = daily.get("days_counted", daily["window_days"])
    if not counted:
        return (f"Daily goal: {daily['goal']} answers a day (no answers yet: the average starts with your "
                "first)")
    verdict = "on target" if daily["met"] else "below target"
    if counted == 1 < daily["window_days"]:  # one day: its count, not an average of one
        n = daily["average"]
        return (f"Daily goal: {n:g} answer{'s' * (n != 1)} today, your first day "
                f"(goal {daily['goal']}, {verdict})")
    span = f"the last {daily['window_days']} days" if counted >= daily["window_days"] else ("your first "
                                                                                            f"{counted} days")
    return f"Daily goal: {daily['average']:g} answers/day over {span} (goal {daily['goal']}, {verdict})"


def stats_renderable(data: dict[str, Any]):
    """The stats as Rich tables (the same numbers as ``attn-tutor stats --json``)."""
    from rich.console import Group  # deferred: loads rich (start-up time)
    from rich.table import Table  # deferred: loads rich (start-up time)

    d = data["due"]
    head = Text.from_markup(
        f"[b]Due now: {d['now']}[/b]   due in the next 24 h: {d['next_24h']}   "
        f"seen {d['seen']} of {d['total']} questions"
    )
    tables = []
    for rows, title in ((data["topics"], "Lesson topics"), (data["exam_topics"], "Exam topics")):
        table = Table(title=title, title_justify="left", box=None, pad_edge=False, padding=(0, 1))
        table.add_column("topic")
        table.add_column("seen", justify="right")
        table.add_column("accuracy", justify="right")
        table.add_column("mastery")
        table.add_column("due", justify="right")
        for r in rows:
            table.add_row(text(r["id"]), f"{r['seen']}/{r['questions']}", percent(r["accuracy"]),
                          f"{bar(r['mastery'])} {percent(r['mastery'])}", str(r["due"]))
        tables.append(table)
    daily = data["daily"]
    days = " ".join(str(x["answers"]) for x in daily["days"])
    goal = Text.assemble(("Daily goal", "bold"), daily_goal(daily).removeprefix("Daily goal"),
                         f" · oldest first: {days}")
    mocks = Table(title="Mock exams", title_justify="left", box=None, pad_edge=False, padding=(0, 1))
    for col in ("when", "score", "answered", "status"):
        mocks.add_column(col)
    for m in data["mock_exams"][-10:]:
        mocks.add_row(m["started_at"][:16].replace("T", " "), f"{m['correct']}/{m['questions']} "
                                                              f"({percent(m['score'])})",
                      str(m["answered"]), text(m["status"]))
    if not data["mock_exams"]:
        mocks.add_row("none yet", "", "", "")
    papers = Table(title="Papers (structured questions)", title_justify="left", box=None,
                   pad_edge=False, padding=(0, 1))
    for col in ("when", "marks", "status"):
        papers.add_column(col)
    for p in data.get("papers", [])[-10:]:
        papers.add_row(p["started_at"][:16].replace("T", " "),
                       f"{p['earned']}/{p['marks']} ({percent(p['score'])})", text(p["status"]))
    if not data.get("papers"):
        papers.add_row("none yet", "", "")
    by_topic = text("Paper marks by topic: " + (", ".join(
        f"{t['id']} {t['earned']}/{t['marks']}" for t in data.get("paper_topics", [])) or "—"))
    note = Text("Mastery = mean recall probability now (FSRS), unseen questions counting 0.", style="dim")
    practice = text("\n".join(practice_text(data.get("practice"))))
    mistakes = text("\n".join(mistakes_text(data.get("mistakes"))))
    return Group(head, Text(""), *tables, Text(""), goal, Text(""), mistakes, Text(""), mocks,
                 Text(""), papers, by_topic, Text(""), practice, Text(""), note)
