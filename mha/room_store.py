"""A room's answers: SQLite in WAL mode at a path the host sets, shared by every server process of one host.

It holds rooms (a short random code, when it was made, when it expires) and answers (room, question id, a hash of
the session's id, right or wrong, when). Never a name, never what a learner typed. ``UNIQUE(room, question,
session)``: one answer per session per question counts (a later answer replaces it). Rooms expire after
:data:`ROOM_HOURS` hours; their answers go with them.

The path: ``ATTN_PLAYGROUND_ROOM_DB``, else ``attn_playground_rooms.sqlite3`` in the temporary directory.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "ENV",
    "ROOM_HOURS",
    "QuestionCount",
    "RoomStore",
    "default_path",
    "is_code",
    "session_hash",
]

ENV = "ATTN_PLAYGROUND_ROOM_DB"
ROOM_HOURS = 12
CODE_LENGTH = 6
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a wall
_SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (code TEXT PRIMARY KEY, created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    room TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
    question TEXT NOT NULL,
    session TEXT NOT NULL,
    right INTEGER NOT NULL,
    at REAL NOT NULL,
    UNIQUE (room, question, session)
);
"""


def default_path() -> Path:
    """The database's path: ``$ATTN_PLAYGROUND_ROOM_DB`` or a file in the temporary directory."""
    return Path(os.environ.get(ENV) or Path(tempfile.gettempdir()) / "attn_playground_rooms.sqlite3")


@dataclass(frozen=True)
class QuestionCount:
    """How many sessions answered one question in a room, and how many of them rightly."""

    question: str
    answered: int
    right: int


def session_hash(session_id: str) -> str:
    """What the store keeps of a session: the first 16 hex digits of its id's SHA-256."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:16]


def is_code(text: str) -> bool:
    """Whether ``text`` could be a room code (checked before the store is asked)."""
    return len(text) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in text)


class RoomStore:
    """Rooms and their answers in one SQLite file (WAL: readers never wait for the writer).

    A connection per call: cheap for SQLite, and safe from any thread or process.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # autocommit; BEGIN where it matters
        try:
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA busy_timeout=30000")
            yield db
        finally:
            db.close()

    def open_room(self, now: float | None = None) -> str:
        """Make a room with a new random code, valid for :data:`ROOM_HOURS` hours; expired rooms are removed."""
        moment = time.time() if now is None else now
        with self._connect() as db:
            db.execute("DELETE FROM rooms WHERE expires <= ?", (moment,))
            while True:
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                try:
                    db.execute("INSERT INTO rooms VALUES (?, ?, ?)", (code, moment, moment + ROOM_HOURS * 3600))
                    return code
                except sqlite3.IntegrityError:  # taken: draw again
                    continue

    def is_open(self, code: str, now: float | None = None) -> bool:
        """Whether room ``code`` exists and has not expired; expired rooms (and their answers) are removed."""
        if not is_code(code):
            return False
        moment = time.time() if now is None else now
        with self._connect() as db:
            db.execute("DELETE FROM rooms WHERE expires <= ?", (moment,))
            row = db.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?", (code, moment)).fetchone()
        return row is not None

    def answer(self, code: str, question: str, session_id: str, right: bool, now: float | None = None) -> bool:
        """Record a session's answer (its latest replaces an earlier one); ``False`` where the room is not open."""
        moment = time.time() if now is None else now
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            open_now = db.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?", (code, moment)).fetchone()
            if open_now is None:
                db.execute("ROLLBACK")
                return False
            db.execute(
                "INSERT INTO answers VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (room, question, session) DO UPDATE SET right = excluded.right, at = excluded.at",
                (code, question, session_hash(session_id), int(right), moment),
            )
            db.execute("COMMIT")
        return True

    def counts(self, code: str) -> tuple[QuestionCount, ...]:
        """Per question: sessions that answered and those right, by question id."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT question, COUNT(*), SUM(right) FROM answers WHERE room = ? GROUP BY question ORDER BY question",
                (code,),
            ).fetchall()
        return tuple(QuestionCount(q, int(n), int(r or 0)) for q, n, r in rows)
