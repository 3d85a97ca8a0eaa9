"""API tokens and roles: what each role may do, how a token looks, how it is stored and checked.

A token is ``ufb_<id>_<secret>``: ``id`` is public (the row, the audit log's actor), ``secret`` is 32 random
bytes, stored only as an argon2 hash. Checking a token costs one argon2 verification (tens of milliseconds
by design), so a verified token is remembered in memory, keyed by its SHA-256, for :data:`CACHE_SECONDS`;
whether it is still live (not revoked) is read from the store on every request.

Roles are sets of permissions, not a ladder: an ``agent`` may ingest but not read the fabric, a ``viewer``
may read but not ingest; ``operator`` does both, ``admin`` everything.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

__all__ = [
    "ADMIN",
    "CACHE_SECONDS",
    "INGEST",
    "INTENT",
    "READ",
    "ROLES",
    "NewToken",
    "Principal",
    "TokenCache",
    "hash_secret",
    "new_token",
    "split_token",
    "verify_secret",
]

ROLES = ("viewer", "operator", "agent", "admin")
READ: tuple[str, ...] = ("viewer", "operator", "admin")  # the fabric, findings, the UI
INGEST: tuple[str, ...] = ("agent", "operator", "admin")  # POST /api/v1/snapshots
ADMIN: tuple[str, ...] = ("admin",)  # tokens, the audit log
INTENT: tuple[str, ...] = ("operator", "admin")  # PUT /api/v1/intent: what the fabric is checked against
CACHE_SECONDS = 60.0
PREFIX = "ufb_"

_hasher = PasswordHasher()


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is: the token's id and role (``cli`` for the command line), and the hosts an agent
    token is limited to (``None``: not limited)."""

    token_id: str
    role: str
    hosts: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class NewToken:
    """A freshly made token: ``token`` is shown once, only ``hash`` is stored."""

    id: str
    token: str
    hash: str


def new_token() -> NewToken:
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return NewToken(token_id, f"{PREFIX}{token_id}_{secret}", hash_secret(secret))


def hash_secret(secret: str) -> str:
    return _hasher.hash(secret)


def verify_secret(stored_hash: str, secret: str) -> bool:
    try:
        return _hasher.verify(stored_hash, secret)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def split_token(token: str) -> tuple[str, str] | None:
    """``(id, secret)`` of a well-formed token, else ``None`` (the secret may itself hold ``_``)."""
    if not token.startswith(PREFIX):
        return None
    token_id, sep, secret = token[len(PREFIX) :].partition("_")
    if not sep or len(token_id) != 12 or not secret or len(secret) > 100:
        return None
    return token_id, secret


class TokenCache:
    """Recently verified tokens (by SHA-256 of the whole token) so each request does not pay argon2."""

    def __init__(self, seconds: float = CACHE_SECONDS) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._known: dict[bytes, tuple[Principal, float]] = {}

    @staticmethod
    def _digest(token: str) -> bytes:
        return hashlib.sha256(token.encode()).digest()

    def get(self, token: str) -> Principal | None:
        key = self._digest(token)
        with self._lock:
            hit = self._known.get(key)
            if hit is None:
                return None
            if hit[1] < time.monotonic():
                del self._known[key]
                return None
            return hit[0]

    def put(self, token: str, principal: Principal) -> None:
        with self._lock:
            if len(self._known) > 10_000:
                self._known.clear()
            self._known[self._digest(token)] = (principal, time.monotonic() + self.seconds)

    def clear(self) -> None:
        with self._lock:
            self._known.clear()
