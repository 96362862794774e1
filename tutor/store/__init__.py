"""The progress store: one SQLite file of answers, card states, lesson opens and mock exams.

Where: ``tutor.paths.data_dir() / "progress.sqlite3"`` (``$ATTN_TUTOR_HOME`` or the platform's
user data folder). :func:`open_store` never raises for a broken environment; it degrades and
says so in :attr:`Store.warnings`:

* a damaged file (``quick_check`` fails, "file is not a database") or a zero-byte file is
  renamed to ``progress.sqlite3.damaged-<UTC timestamp>`` and a fresh store is started;
* a read-only data folder (or file) gives an in-memory store that starts from a copy of the
  saved progress, if any; nothing of this session is saved;
* a file written by a newer attn-tutor (``user_version`` above ours) is treated the same way,
  so an old copy never rewrites a new schema.

Concurrency: two running copies may share the file. The journal is WAL, every connection has
a busy timeout, an answer is its own committed INSERT, and a card's state is read, updated and
written inside one ``BEGIN IMMEDIATE`` transaction, so neither copy loses the other's work.
:meth:`Store.record_answer` returns only after the COMMIT: a UI that prints "correct" after it
has the answer on disk.

A new file is built under a temporary name and linked into place only if no file exists yet,
so a zero-byte file at the real path is never a copy that is still being created.

Times are timezone-aware UTC datetimes, stored as ISO 8601 text; ``day`` is the local calendar
date of an answer (what "answers per day" means to a student).

Modules: :mod:`~tutor.store.core` (the :class:`Store` and its records),
:mod:`~tutor.store.opening` (:func:`open_store`: creation, checks, fallbacks) and
:mod:`~tutor.store.schema` (migrations).
"""

from __future__ import annotations

from tutor.store.core import (
    Answer,
    CardRow,
    MockExam,
    QuestionStats,
    Store,
    StoreError,
    local_day,
    utcnow,
)
from tutor.store.opening import FILENAME, default_path, open_store
from tutor.store.schema import SCHEMA_VERSION

__all__ = ["FILENAME", "SCHEMA_VERSION", "Answer", "CardRow", "MockExam", "QuestionStats",
           "Store", "StoreError", "default_path", "local_day", "open_store", "utcnow"]
