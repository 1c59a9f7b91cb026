"""Named leases held in this process's memory: the SQLite backend's `AcquireLease`.

A SQLite ranker is one process, the only one that grants its leases, so a dict is exact and the
same rules as the PostgreSQL backend's table apply (`Store.acquire_lease`). A lease is
coordination, not a record: it lasts seconds, and a bridge that cannot reach the ranker writes
without one anyway, so a lease forgotten when the process restarts costs no more than that
outage did. In the file, every acquire waited for an fsync and every release for two, on the
path of every add.
"""

from __future__ import annotations

from dataclasses import dataclass

from mem0_ranker._store import LeaseAnswer


@dataclass
class _Lease:
    holder: str
    expires_at: float
    next_holder: str = ""
    next_until: float = 0.0

    def free_for(self, holder: str, now: float) -> bool:
        """Can `holder` take it: its own already, or expired with nobody else next in line."""
        return self.holder == holder or (
            self.expires_at <= now and (self.next_holder in ("", holder) or self.next_until <= now)
        )


class MemoryLeases:
    """Every lease of one ranker process, by key; a free lease nobody waits for has no entry."""

    def __init__(self) -> None:
        self._leases: dict[str, _Lease] = {}

    def acquire(
        self, key: str, holder: str, ttl_seconds: float, now: float, next_in_line_seconds: float
    ) -> LeaseAnswer:
        lease = self._leases.get(key)
        if lease is None:
            lease = self._leases[key] = _Lease(holder, now + ttl_seconds)
        elif lease.free_for(holder, now):
            lease.holder, lease.expires_at = holder, now + ttl_seconds
            if lease.next_holder == holder:
                lease.next_holder, lease.next_until = "", 0.0
        elif lease.next_holder in ("", holder) or lease.next_until <= now:
            lease.next_holder, lease.next_until = holder, now + next_in_line_seconds
        return LeaseAnswer(
            granted=lease.holder == holder, expires_in=max(0.0, lease.expires_at - now)
        )

    def release(self, key: str, holder: str, now: float) -> bool:
        lease = self._leases.get(key)
        if lease is None:
            return False
        released = lease.holder == holder
        if released:
            lease.holder, lease.expires_at = "", 0.0
        if lease.holder == "" and (lease.next_holder == "" or lease.next_until <= now):
            del self._leases[key]
        return released
