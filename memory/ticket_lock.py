"""A first-come, first-served lock across processes: waiters take numbered tickets and enter in order.

Why: a plain file lock polled by several processes is not fair: the holder that releases and
re-acquires at once wins again and again, and a waiter can time out while others write hundreds of
times. Here each waiter owns a ticket file in `<folder>/.queue/` and holds an `flock` on it while it
waits and while it holds the lock; it enters when no ticket below its own remains. It waits on the
ticket just ahead of it: when that one's flock comes free its owner is done (it removed its file) or
dead (the OS dropped its flock; the waiter removes the file for it), so a killed waiter or holder
never blocks the line. Tickets are numbered and published under one short flock, so a ticket never
appears below one already taken. POSIX only (fcntl), as LanceDB's local stores are.
"""

from __future__ import annotations

import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path

QUEUE_DIR = ".queue"
COUNTER = "next"
POLL_S = 0.002


class TicketTimeout(Exception):
    """The tickets ahead did not all leave within the timeout."""


@dataclass
class Ticket:
    number: int
    path: Path
    fd: int
    waited_s: float = 0.0


class TicketLock:
    def __init__(self, folder: Path):
        self.queue = Path(folder) / QUEUE_DIR

    def acquire(self, timeout: float) -> Ticket:
        """Wait for every earlier ticket to leave; raise TicketTimeout after `timeout` seconds."""
        t0 = time.monotonic()
        ticket = self._take()
        try:
            while (ahead := self._just_ahead(ticket.number)) is not None:
                self._wait_for(ahead, t0 + timeout)
        except BaseException:
            self.release(ticket)
            raise
        ticket.waited_s = time.monotonic() - t0
        return ticket

    def release(self, ticket: Ticket) -> None:
        # Remove the file before dropping the flock: whoever then gets the flock finds it gone.
        ticket.path.unlink(missing_ok=True)
        os.close(ticket.fd)

    def _take(self) -> Ticket:
        self.queue.mkdir(exist_ok=True)
        counter = os.open(self.queue / COUNTER, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(counter, fcntl.LOCK_EX)
            number = int(os.pread(counter, 32, 0) or b"0") + 1
            os.pwrite(counter, f"{number:<20}".encode(), 0)
            # Lock the file before it gets its name: a named ticket without a flock reads as dead.
            tmp = self.queue / f"tmp{os.getpid()}-{number}"
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            path = self.queue / f"{number:020d}"
            os.rename(tmp, path)
        finally:
            os.close(counter)  # drops its flock
        return Ticket(number, path, fd)

    def _just_ahead(self, number: int) -> Path | None:
        ahead = [n for n in os.listdir(self.queue) if n.isdigit() and int(n) < number]
        return self.queue / max(ahead) if ahead else None

    def _wait_for(self, path: Path, deadline: float) -> None:
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return  # it left meanwhile
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TicketTimeout(str(path)) from None
                    time.sleep(POLL_S)
            # Its owner left (the file is gone already) or died holding it: clear it from the line.
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)
