"""Debounce keyed work: a newer request for the same key cancels the pending or running one.

Kept apart from the handlers (as jedi-language-server does) so it is tested on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


class Debouncer:
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self._tasks: dict[Any, asyncio.Task] = {}

    def schedule(self, key: Any, work: Callable[[], Awaitable[None]]) -> asyncio.Task:
        """Run `work()` after the delay unless another schedule() for `key` comes first."""
        old = self._tasks.get(key)
        if old is not None and not old.done():
            old.cancel()

        async def later() -> None:
            await asyncio.sleep(self.delay_s)
            await work()

        task = asyncio.get_running_loop().create_task(later())
        self._tasks[key] = task
        task.add_done_callback(lambda t, k=key: self._tasks.pop(k, None) if self._tasks.get(k) is t else None)
        return task

    def pending(self, key: Any) -> bool:
        t = self._tasks.get(key)
        return t is not None and not t.done()
