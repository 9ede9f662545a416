"""Model replicas on a Ray cluster behind the one `Backend` interface: ``medtemporal run ... --ray [ADDRESS]``.

Each replica is a Ray actor that loads the model (``hf:``, ``vllm:`` or any
other URI) with the run's backend options, on its own GPU(s) (``num_gpus``,
default 1 when the cluster has GPUs; vLLM's ``tensor_parallel_size`` inside a
replica) or CPUs (``num_cpus``). `RayPool` is the backend the runner sees: a
request waits on a queue of free replica slots (each replica offers its own
backend's concurrency), goes to that replica, and its response comes back to
the driver, where the runner alone writes ``predictions.jsonl``, the response
cache and scores: the run folder is exactly that of a one-process run, and its
identity (what keys the cache and resume) is the model's own.

A replica that dies is restarted by Ray (``max_restarts``) and the requests it
held are retried there (``max_task_retries``); if it cannot come back, they go
to a live replica. A request may then reach the model twice, but its answer is
written once. Images are read by the replica, so on several nodes the image
root must be on a shared file system at the same path.

    ray start --head                       # on the first node (ray start --address=HEAD:6379 on the others)
    medtemporal run BENCH --model hf:/models/MedGemma-4b-it --out runs/x --ray auto --replicas 8
"""

from __future__ import annotations

import asyncio
from typing import Any

from medtemporal.backends.base import Backend, Request, Response
from medtemporal.errors import InvalidInputError, require

RESTARTS = 3
"""How many times Ray restarts a replica that died (its requests are retried there)."""


class _Replica:
    """One model replica (run as a Ray actor): the backend ``load(uri, **options)`` in the actor's process."""

    def __init__(self, uri: str, options: dict[str, Any]) -> None:
        from medtemporal.backends import load

        self.backend = load(uri, **options)

    def describe(self) -> dict[str, Any]:
        """Identity, settings, image limit, concurrency and cacheability of the replica's backend."""
        b = self.backend
        return {"identity": b.identity(), "settings": b.settings(), "max_images": b.max_images,
                "concurrency": b.concurrency, "cacheable": b.cacheable, "endpoint": b.endpoint,
                "takes_volumes": b.takes_volumes}

    def fit(self, pairs: list[tuple[str, str]]) -> None:
        self.backend.fit(pairs)

    def fit_answers(self, answers: dict[str, Any]) -> None:
        self.backend.fit_answers(answers)

    def fit_items(self, items: list[Any]) -> None:
        self.backend.fit_items(items)

    async def generate(self, request: Request) -> Response:
        return await self.backend.generate(request)

    def pid(self) -> int:
        import os

        return os.getpid()


class RayPool(Backend):
    """``replicas`` actors running ``uri``, used as one backend.

    Args:
        uri: the model URI each replica loads.
        options: backend options of each replica (as ``--option``).
        address: Ray cluster address (``auto``, ``ray://HOST:10001``, ``HOST:6379``), or None to start a local one
            (or use the one this process already joined).
        replicas: how many replicas (default: the cluster's GPUs / ``num_gpus``, else 1).
        num_gpus: GPUs per replica (default 1 when the cluster has GPUs, else 0).
        num_cpus: CPUs per replica (default 1).
    """

    def __init__(
        self,
        uri: str,
        options: dict[str, Any] | None = None,
        *,
        address: str | None = None,
        replicas: int | None = None,
        num_gpus: float | None = None,
        num_cpus: float | None = None,
    ) -> None:
        ray = require("ray", "ray")
        self._ray = ray
        if not ray.is_initialized():
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise InvalidInputError(
                    f"Cannot join the Ray cluster at {address or 'a new local one'} ({exc}); start it with "
                    "`ray start --head` and pass its address to --ray, or pass --ray alone for a local one."
                ) from None
        resources = ray.cluster_resources()
        gpus = resources.get("GPU", 0)
        self.num_gpus = float(num_gpus) if num_gpus is not None else (1.0 if gpus else 0.0)
        self.num_cpus = float(num_cpus) if num_cpus is not None else 1.0
        if replicas is None:
            replicas = max(1, int(gpus // self.num_gpus)) if self.num_gpus else 1
        if replicas < 1:
            raise InvalidInputError(f"--replicas must be at least 1, not {replicas}.")
        for name, each in (("GPU", self.num_gpus), ("CPU", self.num_cpus)):
            if replicas * each > resources.get(name, 0):
                raise InvalidInputError(
                    f"{replicas} replicas of {each:g} {name} each need {replicas * each:g} {name}, but the Ray "
                    f"cluster has {resources.get(name, 0):g}; pass fewer --replicas or a smaller num_{name.lower()}s."
                )
        self.address = address
        self.options = dict(options or {})
        actor = ray.remote(_Replica).options(
            num_gpus=self.num_gpus, num_cpus=self.num_cpus, max_restarts=RESTARTS, max_task_retries=RESTARTS
        )
        self.replicas = [actor.remote(uri, self.options) for _ in range(replicas)]
        """The replica actors (the runner never needs them; tests kill one)."""
        try:
            described = ray.get([r.describe.remote() for r in self.replicas])
        except ray.exceptions.RayActorError as exc:
            for r in self.replicas:
                ray.kill(r)
            raise InvalidInputError(f"A replica of {uri} failed to load the model ({exc.__class__.__name__}: "
                                    f"{str(exc)[:300]}); check the URI and --option values.") from None
        first = described[0]
        per_replica = max(1, int(first["concurrency"]))
        super().__init__(uri=uri, max_images=first["max_images"], concurrency=per_replica * replicas)
        self._identity = first["identity"]
        self._settings = first["settings"]
        self._endpoint = first["endpoint"]
        self._takes_volumes = bool(first.get("takes_volumes", False))
        self.cacheable = first["cacheable"]  # type: ignore[misc]  (the replicas' backend decides)
        self._per_replica = per_replica
        self._slots: asyncio.Queue[int] | None = None
        self._dead: set[int] = set()
        self.served_by: dict[int, int] = {}
        """Replica index → requests it answered (for logs, tests and the scaling bench)."""

    @property
    def takes_volumes(self) -> bool:
        return self._takes_volumes

    @property
    def endpoint(self) -> str | None:
        return self._endpoint

    def identity(self) -> dict[str, Any]:
        return self._identity

    def settings(self) -> dict[str, Any]:
        return {**self._settings, "ray": {"address": self.address, "replicas": len(self.replicas),
                                          "num_gpus": self.num_gpus, "num_cpus": self.num_cpus}}

    def fit(self, pairs: list[tuple[str, str]]) -> None:
        self._ray.get([r.fit.remote(pairs) for r in self.replicas])

    def fit_answers(self, answers: dict[str, Any]) -> None:
        self._ray.get([r.fit_answers.remote(answers) for r in self.replicas])

    def fit_items(self, items: list[Any]) -> None:
        self._ray.get([r.fit_items.remote(items) for r in self.replicas])

    def _free_slots(self) -> asyncio.Queue[int]:
        if self._slots is None:  # made on the run's loop
            self._slots = asyncio.Queue()
            for _ in range(self._per_replica):
                for n in range(len(self.replicas)):
                    self._slots.put_nowait(n)
        return self._slots

    async def generate(self, request: Request) -> Response:
        """Answer ``request`` on a free replica; a replica lost for good hands its request to another."""
        slots = self._free_slots()
        while True:
            if len(self._dead) == len(self.replicas):
                raise InvalidInputError(f"Every replica of {self.uri} died; see the Ray logs, then run the same "
                                        "command again to resume.")
            n = await slots.get()
            if n in self._dead:
                continue
            try:
                response = await self.replicas[n].generate.remote(request)
            except self._ray.exceptions.RayTaskError as exc:  # the backend's own error, raised as it was
                slots.put_nowait(n)
                raise exc.cause from None
            except self._ray.exceptions.RayActorError:
                self._dead.add(n)  # restarts used up: its slots are dropped as they come back
                continue
            except BaseException:
                slots.put_nowait(n)
                raise
            slots.put_nowait(n)
            self.served_by[n] = self.served_by.get(n, 0) + 1
            return response

    async def aclose(self) -> None:
        for replica in self.replicas:
            self._ray.kill(replica, no_restart=True)
