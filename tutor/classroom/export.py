"""A class session's results as CSV or JSON (``attn-tutor class export``).

Per question: each bucket (right, each diagnosed mistake, unknown; or each option) with its
count in the first and the second vote side by side. Per student: their answers in both
votes, under the name they gave or as ``anonymous`` — never their token. The JSON schema
(``schema`` 1) is in ``docs/class-protocol.md``.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path
from typing import Any

from tutor import atomic
from tutor.classroom.room import ANONYMOUS
from tutor.errors import UserError
from tutor.render.safe import clean, json_dumps, shown_path
from tutor.store import Store, open_store
from tutor.store import classes as saved

SCHEMA = 1


def results(store: Store, session_id: str) -> dict[str, Any]:
    """Everything the export holds, as JSON-ready data.

    Raises:
        UserError: no such session (``last`` names the newest).
    """
    every = saved.sessions(store)
    if session_id == "last" and every:
        session_id = every[-1].id
    sess = saved.session(store, session_id)
    if sess is None:
        known = ", ".join(s.id for s in every[-5:]) or "none yet"
        raise UserError(f"no class session {session_id[:40]!r}; sessions: {known}")
    names = {s.student: s.name or ANONYMOUS for s in saved.students(store, sess.id)}
    questions = []
    for q in saved.questions(store, sess.id):
        rows = saved.answers(store, sess.id, q.number)
        buckets: dict[str, dict[str, Any]] = {}
        per_student: dict[str, dict[str, Any]] = {}
        for a in rows:
            b = buckets.setdefault(a.bucket, {"bucket": a.bucket, "title": a.title,
                                              "correct": a.correct, "votes": [0, 0]})
            b["votes"][a.round - 1] += 1
            who = per_student.setdefault(a.student, {"student": names.get(a.student, ANONYMOUS),
                                                     "votes": [None, None]})
            who["votes"][a.round - 1] = {"response": a.response, "bucket": a.bucket,
                                         "correct": a.correct, "seconds": a.seconds}
        answered = [sum(1 for a in rows if a.round == r) for r in (1, 2)]
        right = [sum(1 for a in rows if a.round == r and a.correct) for r in (1, 2)]
        questions.append({
            "number": q.number, "ref": q.ref, "title": q.title, "state": q.state,
            "answered": answered, "right": right,
            "buckets": sorted(buckets.values(), key=lambda b: (not b["correct"], -sum(b["votes"]))),
            "students": list(per_student.values()),
        })
    return {"schema": SCHEMA, "session": {
        "id": sess.id, "started_at": sess.started_at.isoformat(),
        "ended_at": sess.ended_at.isoformat() if sess.ended_at else None,
        "status": sess.status, "students": len(names)}, "questions": questions}


def to_csv(data: dict[str, Any], students: bool = False) -> str:
    """One row per question and bucket (vote 1 and vote 2 counts side by side), or with
    ``students`` one row per question and student."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    sid = data["session"]["id"]
    if students:
        w.writerow(["session", "question", "ref", "student", "vote1", "vote1_bucket",
                    "vote2", "vote2_bucket", "final_correct"])
        for q in data["questions"]:
            for s in q["students"]:
                v1, v2 = s["votes"]
                final = v2 or v1
                w.writerow([sid, q["number"], q["ref"], s["student"],
                            v1["response"] if v1 else "", v1["bucket"] if v1 else "",
                            v2["response"] if v2 else "", v2["bucket"] if v2 else "",
                            int(final["correct"]) if final else ""])
    else:
        w.writerow(["session", "question", "ref", "title", "bucket", "bucket_title", "correct",
                    "vote1", "vote2", "vote1_answered", "vote2_answered"])
        for q in data["questions"]:
            for b in q["buckets"]:
                w.writerow([sid, q["number"], q["ref"], q["title"], b["bucket"], b["title"],
                            int(b["correct"]), b["votes"][0], b["votes"][1], q["answered"][0],
                            q["answered"][1]])
    return buf.getvalue()


def run_export(session_id: str, fmt: str, out: str | None, students: bool = False) -> None:
    """Write the export to ``out`` (atomically) or stdout."""
    with open_store() as store:
        data = results(store, session_id)
    text = json_dumps(data, indent=2) + "\n" if fmt == "json" else to_csv(data, students)
    if out is None:
        sys.stdout.write(text if fmt == "json" else clean(text))
        return
    path = Path(out)
    if path.is_dir():
        raise UserError(f"--out {shown_path(out[:60])}: is a folder; expected a file name")
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise UserError(f"--out {shown_path(out[:60])}: cannot write ({exc.strerror or exc})") from None
    print(f"attn-tutor: wrote {shown_path(path)}", file=sys.stderr)


def print_sessions() -> None:
    """One line per session: id, start, status, students, questions."""
    with open_store() as store:
        every = saved.sessions(store)
        if not every:
            print("No class sessions yet (attn-tutor class host starts one).")
            return
        for s in every:
            n_students = len(saved.students(store, s.id))
            n_questions = len(saved.questions(store, s.id))
            print(clean(f"{s.id}  {s.started_at:%Y-%m-%d %H:%M}  {s.status:<7}  "
                        f"{n_students} students  {n_questions} questions", lines=False))
