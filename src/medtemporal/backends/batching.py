"""Batching for in-process models: concurrent ``generate`` calls become one batched call.

The runner calls ``generate`` once per request, many at a time; a local
model is fastest when it sees them together. `MicroBatcher` queues prepared
inputs, groups those with the same group key (generation settings) up to
``batch_size``, and runs each group through a blocking ``run_batch`` in a
worker thread, one group at a time (one model, one device).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class MicroBatcher(Generic[T, R]):
    """Collects concurrent inputs into batches for ``run_batch``.

    Args:
        run_batch: answers a list of inputs of one group, in order (blocking); an answer that is an exception
            fails its input alone.
        batch_size: largest batch.
        wait_s: how long the first request of a batch waits for company.
    """

    def __init__(self, run_batch: Callable[[list[T]], list[R]], batch_size: int, wait_s: float = 0.02) -> None:
        self.run_batch = run_batch
        self.batch_size = max(1, batch_size)
        self.wait_s = wait_s
        self.batches: list[int] = []
        """Sizes of the batches run so far (for tests and logs)."""
        self._queue: list[tuple[T, Hashable, asyncio.Future[R]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, value: T, group: Hashable) -> R:
        """Queue ``value`` (batched only with values of the same ``group``) and wait for its result."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((value, group, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work())
        return await future

    def _take(self) -> list[tuple[T, asyncio.Future[R]]]:
        """The oldest live input and up to ``batch_size - 1`` others of its group."""
        self._queue = [q for q in self._queue if not q[2].cancelled()]
        if not self._queue:
            return []
        group = self._queue[0][1]
        batch = [q for q in self._queue if q[1] == group][: self.batch_size]
        taken = {id(q[2]) for q in batch}
        self._queue = [q for q in self._queue if id(q[2]) not in taken]
        return [(v, f) for v, _, f in batch]

    async def _work(self) -> None:
        while self._queue:
            if len(self._queue) < self.batch_size:
                await asyncio.sleep(self.wait_s)
            batch = self._take()
            if not batch:
                break
            self.batches.append(len(batch))
            try:
                results = await asyncio.to_thread(self.run_batch, [v for v, _ in batch])
            except Exception as exc:
                for _, f in batch:
                    if not f.done():
                        f.set_exception(exc)
                continue
            for (_, f), result in zip(batch, results, strict=True):
                if not f.done():
                    if isinstance(result, BaseException):  # this input failed on its own; the others stand
                        f.set_exception(result)
                    else:
                        f.set_result(result)
