"""The progress store: one SQLite file of answers, card states, lesson opens and mock exams.

Where: ``tutor.paths.data_dir() / "progress.sqlite3"`` (``$ATTN_TUTOR_HOME`` or the platform's
user data folder). :func:`open_store` never raises for a broken environment; it degrades and
says so in :attr:`Store.warnings`:

* a damaged file (``quick_check`` fails, "file is not a database") or a zero-byte file is
  renamed to ``progress.sqlite3.damaged-<UTC timestamp>`` and a fresh store is started. Only
  real corruption does this (:mod:`~tutor.store.faults` sorts SQLite's errors): a file that
  another program holds locked past the busy timeout, a full disk or an I/O error leaves the
  file untouched, with one line saying what happened and that this session saves nothing;
* a read-only data folder (or file) gives an in-memory store that starts from a copy of the
  saved progress, if any — including the answers still in the ``-wal`` after a crash
  (:func:`~tutor.store.opening.read_snapshot`); nothing of this session is saved;
* a file written by a newer attn-tutor (``user_version`` above ours) is treated the same way,
  so an old copy never rewrites a new schema;
* a table, index or view missing from a file whose ``user_version`` is set is created again
  (empty), and the rest of the file is kept;
* a path that is a folder (or another special file), a read-only file and a read-only folder
  are each named for what they are.

What can be read of a damaged file is copied into the fresh one (:mod:`~tutor.store.salvage`,
which reads a truncated file's tables too) and the warning says where the rest is kept.

A mock exam or paper left ``running`` by a program that was killed is closed as ``stopped``
once it is an hour past its time limit, the next time the store is opened
(:mod:`~tutor.store.stuck`; one warning line says so).

A row that cannot be read (a bad date, card JSON that does not parse...) is skipped by every
reader and listed in :attr:`Store.bad_rows`; :meth:`Store.take_notices` gives one line about
new ones for the user, and ``attn-tutor check`` (:mod:`~tutor.store.check`) repairs them.

A write that fails (locked, disk full, I/O error) raises :class:`StoreError` and saves
nothing; a quiz reports that answer as not saved.

Concurrency: two running copies may share the file. The journal is WAL, every connection has
a busy timeout, an answer is its own committed INSERT, and a card's state is read, updated and
written inside one ``BEGIN IMMEDIATE`` transaction, so neither copy loses the other's work.
:meth:`Store.record_answer` returns only after the COMMIT: a UI that prints "correct" after it
has the answer on disk.

A new file is built under a temporary name and linked into place only if no file exists yet,
so a zero-byte file at the real path is never a copy that is still being created.

Times are timezone-aware UTC datetimes, stored as ISO 8601 text; ``day`` is the local calendar
date of an answer (what "answers per day" means to a student).

Modules: :mod:`~tutor.store.core` (the :class:`Store`), :mod:`~tutor.store.rows` (records and
the parsing that decides a row is malformed; :mod:`~tutor.store.paper_rows` for papers and
settings, each setting checked on reading), :mod:`~tutor.store.opening` (:func:`open_store`:
creation, checks, fallbacks), :mod:`~tutor.store.faults` (what an SQLite error means),
:mod:`~tutor.store.schema` (migrations, lost tables), :mod:`~tutor.store.salvage` (rows out of a
damaged file), :mod:`~tutor.store.stuck` (sittings a crash left running) and
:mod:`~tutor.store.check` (check and repair).
"""

from __future__ import annotations

from tutor.store.core import Store, local_day, utcnow
from tutor.store.faults import StoreError
from tutor.store.opening import FILENAME, default_path, open_store
from tutor.store.rows import Answer, BadRow, CardRow, MockExam, QuestionStats
from tutor.store.schema import SCHEMA_VERSION

__all__ = ["FILENAME", "SCHEMA_VERSION", "Answer", "BadRow", "CardRow", "MockExam",
           "QuestionStats", "Store", "StoreError", "default_path", "local_day", "open_store", "utcnow"]
