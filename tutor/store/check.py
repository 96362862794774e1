"""Check and repair the progress file, in the spirit of Anki's "Check Database".

:func:`check_store` looks for, and unless ``repair=False`` repairs:

* **damage** — ``PRAGMA integrity_check`` fails: the file is moved aside (kept) and every row
  that can still be read is copied into a fresh one (:mod:`~tutor.store.salvage`); a
  zero-byte file is moved aside as empty, as :func:`~tutor.store.open_store` does;
* **lost tables** — a table, index or view of the schema is missing: created again;
* **malformed rows** — a row no reader can use (:mod:`~tutor.store.rows` decides): a card is
  rebuilt from its answer history when the caller can replay it (``rebuild_card``), any other
  bad row is moved into the ``set_aside`` table, unchanged, so nothing is deleted;
* **stuck mock exams and papers** — still ``running`` long after their time limit (the
  program was killed): closed as ``stopped`` (:mod:`~tutor.store.stuck`, the rule opening the
  store applies too), a mock exam's answered and correct counts taken from its answers;
* **bad settings** — a stored setting no reader accepts (``{"minutes": Infinity}``): a bad
  row of the ``settings`` table (:mod:`~tutor.store.paper_rows` validates each setting);
* **orphans** — answers that name a mock exam that does not exist: unlinked from it.

With ``repair=False`` (``--dry-run``) nothing is written at all, not even SQLite's ``-wal``
and ``-shm`` files: the file is read as immutable, or copied with its ``-wal`` to a temporary
folder (:func:`~tutor.store.opening.read_snapshot` with ``untouched=True``).

Nothing here prints: the report is data, and ``attn-tutor check`` renders it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tutor.render.safe import shown_path
from tutor.store import core, faults, opening, salvage, schema, stuck
from tutor.store.faults import StoreError
from tutor.store.rows import KEYS, PARSERS, BadRow, CardRow, iso

SCHEMA = 1
"""Version of :meth:`CheckReport.to_json`'s layout."""

SET_ASIDE_SQL = """CREATE TABLE IF NOT EXISTS set_aside (
    id          INTEGER PRIMARY KEY,
    table_name  TEXT NOT NULL,
    row_key     TEXT NOT NULL,
    row_json    TEXT NOT NULL,   -- the row as it was, every column
    reason      TEXT NOT NULL,
    set_aside_at TEXT NOT NULL
)"""
"""Where malformed rows go. Created only when needed and not a migration, so an older
attn-tutor still opens a file that has it."""

Reviews = list[tuple[int, datetime]]
"""A card's history: ``(rating, answered_at)`` of its scheduled answers, oldest first."""


@dataclass
class Problem:
    kind: str
    """damaged | empty | lost-table | bad-row | stuck-mock | stuck-paper | orphan | newer-schema"""
    where: str
    found: str
    fixed: str | None = None
    """What was done; None when it was left as found."""


@dataclass
class CheckReport:
    path: str
    exists: bool = True
    integrity: str = "ok"
    repaired: bool = False
    """True when repairs were allowed (``repair=True``) and the file could be written."""
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    note: str = ""

    @property
    def unfixed(self) -> list[Problem]:
        return [p for p in self.problems if p.fixed is None]

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "path": self.path, "exists": self.exists,
                "integrity": self.integrity, "repaired": self.repaired, "counts": self.counts,
                "problems": [asdict(p) for p in self.problems], "note": self.note}


def check_store(path: str | Path | None = None, *, repair: bool = True,
                now: Callable[[], datetime] = core.utcnow,
                rebuild_card: Callable[[str, Reviews], dict[str, Any] | None] | None = None,
                valid_card: Callable[[dict[str, Any]], bool] | None = None) -> CheckReport:
    """Check the progress file at ``path`` (default: the usual one) and repair what it can.

    Args:
        repair: False only reports.
        now: the clock that decides which running mock exams are stuck.
        rebuild_card: replays a question's reviews into a new card; without it a bad card is
            set aside (the question is then asked as new).
        valid_card: also treats a card that parses but fails this test as malformed.

    Raises:
        StoreError: the file cannot be read or written now (locked, disk full, I/O error).
    """
    path = Path(path) if path is not None else opening.default_path()
    report = CheckReport(str(path))
    if not path.exists():
        report.exists = False
        report.note = "no progress file yet: nothing to check"
        return report
    writable = repair and opening._writable(path)
    if path.is_file() and path.stat().st_size == 0:
        return _empty(path, report, repair, writable)
    conn = None
    try:
        if writable:
            conn = opening._connect(path)
            found = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        else:  # read-only, or a dry run: write nothing, not even -wal and -shm
            conn, found = _read_only_copy(path)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        if faults.kind(exc) != faults.CORRUPT:
            raise _error(exc) from exc
        found = [str(exc)]
    if found != ["ok"]:
        report.integrity = "; ".join(found[:3])
        if conn is not None:
            conn.close()
        if not writable:
            report.problems.append(Problem("damaged", path.name, report.integrity))
            return _finish(report, repair, writable)
        conn = _rebuild_damaged(path, report)
    assert conn is not None  # the file's own connection when it was sound, else the rebuilt one
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > schema.SCHEMA_VERSION:
            report.problems.append(Problem(
                "newer-schema", path.name, f"written by a newer attn-tutor (schema {version}, "
                f"this one knows {schema.SCHEMA_VERSION}); not checked further"))
            return _finish(report, repair, writable)
        if writable:
            conn.execute("BEGIN IMMEDIATE")
        _lost_tables(conn, version, report, writable)
        for table in PARSERS:
            _bad_rows(conn, table, report, writable, rebuild_card, valid_card)
        for table in stuck.TABLES:
            _stuck(conn, table, now(), report, writable)
        _orphans(conn, report, writable)
        report.counts = {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                         for t in PARSERS if _has_table(conn, t)}
        if writable:
            conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise _error(exc) from exc
    finally:
        conn.close()
    return _finish(report, repair, writable)


def _finish(report: CheckReport, repair: bool, writable: bool) -> CheckReport:
    report.repaired = writable
    if repair and not writable and report.problems:
        report.note = "the progress file is read-only: nothing was repaired"
    return report


def _empty(path: Path, report: CheckReport, repair: bool, writable: bool) -> CheckReport:
    """A zero-byte file holds nothing (a copy killed while creating it, a failed copy): moved
    aside and a fresh one started, as opening the store would."""
    report.integrity = "empty file (zero bytes)"
    fixed = None
    if writable:
        aside = opening._move_aside(path, "is empty (zero bytes)", [])
        opening._create(path)
        fixed = f"moved to {shown_path(aside.name) if aside else '?'}; a fresh file started"
    report.problems.append(Problem("empty", path.name, "the file is empty (zero bytes): it "
                                   "holds no progress", fixed))
    return _finish(report, repair, writable)


def _read_only_copy(path: Path) -> tuple[sqlite3.Connection | None, list[str]]:
    """The file (with its -wal) copied into memory without writing anything beside it, and
    what ``quick_check`` found: ``(copy, ["ok"])`` or ``(None, [damage])``."""
    conn = opening._connect(":memory:")
    problem = opening.read_snapshot(path, conn, untouched=True)
    if problem is None:
        return conn, ["ok"]
    conn.close()
    if problem.startswith("damaged: "):
        return None, [problem.removeprefix("damaged: ")]
    raise StoreError(f"cannot check the progress file: {problem}")


def _error(exc: sqlite3.Error) -> StoreError:
    return StoreError(f"cannot check the progress file: "
                      f"{faults.describe(exc, core.BUSY_TIMEOUT_MS)}", faults.kind(exc))


def _rebuild_damaged(path: Path, report: CheckReport) -> sqlite3.Connection:
    """Move the damaged file aside, start a fresh one and copy into it what can be read."""
    warnings: list[str] = []
    aside = opening._move_aside(path, "is damaged", warnings)
    opening._create(path)
    conn = opening._connect(path)
    copied = salvage.copy_rows(aside, conn) if aside is not None else {}
    rows = salvage.counted(copied) or "no rows"
    rest = f"; anything else stays in {shown_path(aside)}" if aside is not None else ""
    report.problems.append(Problem(
        "damaged", path.name, report.integrity,
        f"moved to {shown_path(aside.name) if aside else '?'} (kept); {rows} copied into a "
        f"fresh file{rest}"))
    return conn


def _lost_tables(conn: sqlite3.Connection, version: int, report: CheckReport,
                 writable: bool) -> None:
    for kind, name, sql in schema.missing(conn, version):
        fixed = None
        if writable:
            conn.execute(sql)
            fixed = "created again (empty)"
        report.problems.append(Problem("lost-table", name, f"{kind} {name} is missing", fixed))


def _bad_rows(conn: sqlite3.Connection, table: str, report: CheckReport, writable: bool,
              rebuild_card, valid_card) -> None:
    if not _has_table(conn, table):
        return
    key = KEYS[table]
    # by rowid: a TEXT PRIMARY KEY may hold NULL (an old SQLite quirk), which no = can find
    for r in conn.execute(f"SELECT rowid AS _rid, * FROM {table}").fetchall():
        why = _why_bad(table, r, valid_card)
        if why is not None:
            fixed = _fix_row(conn, table, r, why, rebuild_card, valid_card) if writable else None
            report.problems.append(Problem("bad-row", f"{table} {r[key]!r}", why, fixed))


def _why_bad(table: str, r: sqlite3.Row, valid_card) -> str | None:
    try:
        record = PARSERS[table](r)
    except BadRow as exc:
        return str(exc)
    if isinstance(record, CardRow) and valid_card is not None and not valid_card(record.card):
        return "card is not a valid fsrs card"
    return None


def _fix_row(conn: sqlite3.Connection, table: str, r: sqlite3.Row, why: str,
             rebuild_card, valid_card) -> str:
    """Repair the row from the rest of the file if that makes it readable, else set it aside."""
    key = KEYS[table]
    repaired = _repair(conn, table, r, why, rebuild_card)
    if repaired is not None:
        again = conn.execute(f"SELECT * FROM {table} WHERE rowid = ?", (r["_rid"],)).fetchone()
        if _why_bad(table, again, valid_card) is None:
            return repaired
    unlinked = ""
    if table == "mock_exams":  # its answers stay, without the link (a foreign key)
        n = conn.execute("UPDATE answers SET mock_id = NULL WHERE mock_id = ?",
                         (r["id"],)).rowcount
        unlinked = f"; its {n} answer{'s' * (n != 1)} kept, unlinked from it" if n else ""
    conn.execute(SET_ASIDE_SQL)
    row = {k: (v.hex() if isinstance(v, bytes) else v) for k, v in dict(r).items() if k != "_rid"}
    conn.execute("INSERT INTO set_aside (table_name, row_key, row_json, reason, set_aside_at)"
                 " VALUES (?,?,?,?,?)", (table, str(r[key]), json.dumps(row), why,
                                         iso(core.utcnow())))
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (r["_rid"],))
    extra = " (the question is asked as new)" if table == "cards" else unlinked
    return f"moved to the set_aside table as it was{extra}"


def _repair(conn: sqlite3.Connection, table: str, r: sqlite3.Row, why: str,
            rebuild_card) -> str | None:
    """Rebuild what the rest of the file determines; None when nothing does."""
    if table == "cards" and rebuild_card is not None:
        reviews = _reviews(conn, r["question_id"])
        card = rebuild_card(r["question_id"], reviews) if reviews else None
        if card is None:
            return None
        lapses = sum(1 for i, (rating, _) in enumerate(reviews) if i and rating == 1)
        topic = conn.execute("SELECT topic FROM answers WHERE question_id = ? AND"
                             " typeof(topic) = 'text' ORDER BY id DESC LIMIT 1",
                             (r["question_id"],)).fetchone()
        conn.execute("UPDATE cards SET topic = ?, card = ?, due = ?, reps = ?, lapses = ?,"
                     " updated_at = ? WHERE rowid = ?",
                     (topic[0] if topic else r["topic"], json.dumps(card),
                      iso(datetime.fromisoformat(card["due"])), len(reviews), lapses,
                      iso(reviews[-1][1]), r["_rid"]))
        return f"rebuilt from its {len(reviews)} answer{'s' * (len(reviews) != 1)}"
    if table == "mock_exams" and why.startswith("per_topic"):
        conn.execute("UPDATE mock_exams SET per_topic = ? WHERE id = ?",
                     (json.dumps(stuck.mock_per_topic(conn, r["id"])), r["id"]))
        return "per_topic recounted from its answers"
    if table == "answers" and why.startswith("parts "):  # the answer stands without its parts
        conn.execute("UPDATE answers SET parts = NULL WHERE rowid = ?", (r["_rid"],))
        return "per-part marks cleared (the answer is kept)"
    if table in ("answers", "paper_parts") and why.startswith("diagnoses "):  # the mark stands
        none = None if table == "answers" else "[]"  # paper_parts.diagnoses is NOT NULL
        conn.execute(f"UPDATE {table} SET diagnoses = ? WHERE rowid = ?", (none, r["_rid"]))
        return "diagnosed mistakes cleared (the answer is kept)"
    return None


def _reviews(conn: sqlite3.Connection, question_id: str) -> Reviews:
    out: Reviews = []
    for rating, at in conn.execute(
            "SELECT rating, answered_at FROM answers WHERE question_id = ? AND mode != 'mock'"
            " AND rating IN (1, 2, 3, 4) ORDER BY id", (question_id,)):
        try:
            out.append((int(rating), datetime.fromisoformat(at).astimezone()))
        except (TypeError, ValueError):
            continue  # a malformed answer is reported (and set aside) on its own
    return out


def _stuck(conn: sqlite3.Connection, table: str, now: datetime, report: CheckReport,
           writable: bool) -> None:
    if not _has_table(conn, table):
        return
    for r in stuck.stuck(conn, table, now):
        fixed = stuck.close(conn, table, r) if writable else None
        start = stuck.started(r)
        kind = "mock" if table == "mock_exams" else "paper"
        report.problems.append(Problem(
            f"stuck-{kind}", f"{table} {r['id']}",
            f"started {start:%Y-%m-%d %H:%M} UTC and still running long after its "
            "time limit (the program was stopped before it could close it)", fixed))


def _orphans(conn: sqlite3.Connection, report: CheckReport, writable: bool) -> None:
    if not (_has_table(conn, "answers") and _has_table(conn, "mock_exams")):
        return
    rows = conn.execute("SELECT id, mock_id FROM answers WHERE mock_id IS NOT NULL AND mock_id"
                        " NOT IN (SELECT id FROM mock_exams) ORDER BY id").fetchall()
    for answer_id, mock_id in rows:
        fixed = None
        if writable:
            conn.execute("UPDATE answers SET mock_id = NULL WHERE id = ?", (answer_id,))
            fixed = "unlinked from it (the answer is kept)"
        report.problems.append(Problem("orphan", f"answers {answer_id!r}",
                                       f"names mock exam {mock_id!r}, which does not exist",
                                       fixed))


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None


def render_text(report: CheckReport) -> list[str]:
    """The report for a person, one string per line."""
    if not report.exists:
        return [f"Progress file: {shown_path(report.path)}", report.note + "."]
    counts = salvage.counted(report.counts, zeros=True)
    out = [f"Progress file: {shown_path(report.path)}" + (f" ({counts})" if counts else ""),
           f"Integrity: {report.integrity}"]
    if not report.problems:
        out.append("No problems found.")
    else:
        n, done = len(report.problems), len(report.problems) - len(report.unfixed)
        tail = f"repaired {done}" if report.repaired else "nothing repaired"
        out.append(f"Found {n} problem{'s' * (n != 1)}; {tail}:")
        for p in report.problems:
            out.append(f"  {p.where}: {p.found}" + (f" -> {p.fixed}" if p.fixed else ""))
    if report.note:
        out.append(report.note[0].upper() + report.note[1:] + ".")
    return out
