import asyncio
import threading

import pytest

from medtemporal.backends.batching import MicroBatcher


def test_concurrent_inputs_are_batched_by_group_up_to_the_batch_size():
    seen: list[list[str]] = []
    threads = set()

    def run_batch(values):
        seen.append(list(values))
        threads.add(threading.get_ident())
        return [v.upper() for v in values]

    batcher = MicroBatcher(run_batch, batch_size=4)

    async def main():
        jobs = [batcher.submit(f"a{i}", "a") for i in range(6)] + [batcher.submit(f"b{i}", "b") for i in range(3)]
        return await asyncio.gather(*jobs)

    results = asyncio.run(main())
    assert results == [f"A{i}" for i in range(6)] + [f"B{i}" for i in range(3)]
    assert all(len(batch) <= 4 for batch in seen)
    assert all(len({v[0] for v in batch}) == 1 for batch in seen)  # one group per batch
    assert sorted(batcher.batches) == [2, 3, 4] and threading.get_ident() not in threads


def test_a_failing_batch_fails_its_inputs_and_the_next_batch_still_runs():
    def run_batch(values):
        if "bad" in values:
            raise RuntimeError("device fell over")
        return values

    batcher = MicroBatcher(run_batch, batch_size=2, wait_s=0)

    async def main():
        first = await asyncio.gather(batcher.submit("bad", 1), batcher.submit("x", 1), return_exceptions=True)
        second = await batcher.submit("y", 1)
        return first, second

    first, second = asyncio.run(main())
    assert all(isinstance(r, RuntimeError) for r in first)
    assert second == "y"


def test_cancelled_inputs_are_not_run():
    ran = []

    def run_batch(values):
        ran.extend(values)
        return values

    batcher = MicroBatcher(run_batch, batch_size=8, wait_s=0.05)

    async def main():
        doomed = asyncio.ensure_future(batcher.submit("doomed", 0))
        kept = asyncio.ensure_future(batcher.submit("kept", 0))
        await asyncio.sleep(0)
        doomed.cancel()
        with pytest.raises(asyncio.CancelledError):
            await doomed
        return await kept

    assert asyncio.run(main()) == "kept"
    assert ran == ["kept"]
