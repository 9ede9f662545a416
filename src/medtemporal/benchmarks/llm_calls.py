"""Model calls of the builders' LLM-assisted text steps: open the backend, send requests, cache responses.

A builder may ask a model to *word* text (MI-CXR summary options,
`mi_cxr_llm`; TemMed VQA questions, `temmed_vqa`), never to decide a label.
Both go through these two functions, so both refuse to send credentialed
data to a remote endpoint unless allowed, and both serve a rebuild from the
response cache.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Sequence

from tqdm import tqdm

from medtemporal.backends.base import Backend, Request
from medtemporal.runner.cache import ResponseCache, request_key


def open_backend(uri: str, benchmark: str, licence: str, allow_remote_data: bool) -> Backend:
    """The backend named by ``uri``, refusing to send ``benchmark``'s credentialed data off this network.

    Raises:
        InvalidInputError: a bad URI, or credentialed data and a remote endpoint without ``allow_remote_data``.
    """
    from medtemporal.backends import load
    from medtemporal.runner.guard import guard_backend

    backend = load(uri)
    guard_backend(backend, benchmark, licence, allow_remote_data)
    return backend


def generate_texts(
    backend: Backend, requests: Sequence[Request], cache: ResponseCache | None, *, desc: str
) -> list[str]:
    """The text of ``backend``'s response to each request, in order; closes the backend afterwards.

    A response found in ``cache`` is served from it, and every new one is put
    there. At most ``backend.concurrency`` calls run at once, under a progress
    bar labelled ``desc`` (shown on a terminal only).
    """
    return asyncio.run(_generate_all(backend, requests, cache, desc))


async def _generate_all(
    backend: Backend, requests: Sequence[Request], cache: ResponseCache | None, desc: str
) -> list[str]:
    gate = asyncio.Semaphore(max(1, backend.concurrency))
    identity = backend.identity()
    bar = tqdm(total=len(requests), desc=desc, disable=not sys.stderr.isatty(), leave=False)

    async def one(request: Request) -> str:
        key = request_key(identity, request)
        response = cache.get(key) if cache is not None else None
        if response is None:
            async with gate:
                response = await backend.generate(request)
            if cache is not None:
                cache.put(key, response)
        bar.update()
        return response.text

    try:
        return list(await asyncio.gather(*(one(r) for r in requests)))
    finally:
        bar.close()
        await backend.aclose()
