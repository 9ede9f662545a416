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

A local cluster (``--ray`` alone) is started with usage stats off and no cloud
detection: Ray's own processes run with a proxy that goes nowhere, so their
start-up asks no cloud metadata server where it runs (Ray probes them even with
usage stats off); the replicas get the caller's proxy settings back. The
data-use guard pins every replica to the checked addresses of an HTTP endpoint
when all replicas run on this machine (an address checked here means another
host elsewhere), and judges a cluster's other machines by their addresses
(`RayPool.endpoint`): credentialed data goes to local replicas only.

    ray start --head                       # on the first node (ray start --address=HEAD:6379 on the others)
    medtemporal run BENCH --model hf:/models/MedGemma-4b-it --out runs/x --ray auto --replicas 8
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from medtemporal.backends.base import Backend, Request, Response
from medtemporal.backends.uri import is_local_address
from medtemporal.errors import BackendError, InvalidInputError, require

RESTARTS = 3
"""How many times Ray restarts a replica that died (its requests are retried there)."""
NOWHERE = "http://127.0.0.1:9"
"""The proxy of a local cluster's own processes: the discard port, where nothing listens."""
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                   "no_proxy", "NO_PROXY")


def start_local(ray: Any) -> dict[str, str]:
    """Start a local Ray cluster with usage stats off (unless ``RAY_USAGE_STATS_ENABLED`` says otherwise) and no
    cloud detection (`NOWHERE` as its processes' proxy); return the proxy settings replicas must get back."""
    saved = {name: os.environ.get(name) for name in PROXY_VARIABLES}
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.update({name: "" if name.lower() == "no_proxy" else NOWHERE for name in PROXY_VARIABLES})
    try:
        ray.init(include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {name: value or "" for name, value in saved.items()}


REACH_S = 12.0
"""How long joining a cluster may take before the run is refused: Ray itself retries for minutes, in C++ code that
neither answers SIGTERM nor can be interrupted, so the join is first tried in a child process this long."""


def check_reachable(address: str | None) -> None:
    """Refuse, in one sentence and within `REACH_S`, a cluster address (``--ray HOST:PORT``, ``ray://HOST:PORT``,
    or ``RAY_ADDRESS`` for ``auto`` or none) that Ray cannot join: nothing listens there, or what answers is no
    Ray cluster. ``auto`` without ``RAY_ADDRESS`` is Ray's to find on this machine (it fails at once when none runs)."""
    given = address if address not in (None, "auto") else os.environ.get("RAY_ADDRESS") or None
    if given is None or given == "auto":
        return
    where = f"RAY_ADDRESS={given}" if given != address else f"--ray {given}"
    host, _, port = given.split("://", 1)[-1].rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        raise InvalidInputError(f"The Ray cluster address {where} is not HOST:PORT (e.g. 10.0.0.5:6379 or "
                                "ray://10.0.0.5:10001); pass the address `ray start --head` printed.")
    fix = ("start it with `ray start --head` and pass the address it prints, or pass --ray alone for a local "
           "cluster" + (" (and unset RAY_ADDRESS)." if "RAY_ADDRESS" in where else "."))
    started = time.monotonic()
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_S / 2).close()
    except OSError as exc:
        why = "nothing listens there" if isinstance(exc, ConnectionRefusedError) else (
            "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc))
        raise InvalidInputError(f"Cannot reach the Ray cluster at {where} ({why}); {fix}") from None
    join = ("import ray, sys; ray.init(address=sys.argv[1], include_dashboard=False, log_to_driver=False, "
            "logging_level='ERROR'); ray.shutdown()")
    child = subprocess.Popen([sys.executable, "-c", join, given], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        joined = child.wait(timeout=max(1.0, REACH_S - (time.monotonic() - started))) == 0
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        raise InvalidInputError(f"Cannot join the Ray cluster at {where} (no Ray cluster answered within "
                                f"{REACH_S:g} s); {fix}") from None
    if not joined:
        raise InvalidInputError(f"Cannot join the Ray cluster at {where} (what answers there is no Ray cluster "
                                f"this Ray {_ray_version()} can join); {fix}")


def _ray_version() -> str:
    from importlib.metadata import version

    return version("ray")


class _Replica:
    """One model replica (run as a Ray actor): the backend ``load(uri, **options)`` in the actor's process."""

    def __init__(self, uri: str, options: dict[str, Any]) -> None:
        from medtemporal.backends import load

        self.backend = load(uri, **options)
        self.pinned: tuple[str, ...] | None = None

    def describe(self) -> dict[str, Any]:
        """Identity, settings, image limit, concurrency and cacheability of the replica's backend, and its node."""
        import ray

        b = self.backend
        return {"identity": b.identity(), "settings": b.settings(), "max_images": b.max_images,
                "concurrency": b.concurrency, "cacheable": b.cacheable, "endpoint": b.endpoint,
                "takes_volumes": b.takes_volumes, "node_id": ray.get_runtime_context().get_node_id(),
                "node_ip": ray.util.get_node_ip_address()}

    def fit(self, pairs: list[tuple[str, str]]) -> None:
        self.backend.fit(pairs)

    def fit_answers(self, answers: dict[str, Any]) -> None:
        self.backend.fit_answers(answers)

    def fit_items(self, items: list[Any]) -> None:
        self.backend.fit_items(items)

    async def generate(self, request: Request, pinned: tuple[str, ...] | None = None) -> Response:
        if pinned is not None and self.pinned != pinned:  # also after Ray restarted this replica
            self.backend.pin(pinned)
            self.pinned = pinned
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
        env: dict[str, str] | None = None
        if not ray.is_initialized():
            try:
                if address is None and not os.environ.get("RAY_ADDRESS"):
                    env = start_local(ray)
                else:
                    check_reachable(address)
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
            num_gpus=self.num_gpus, num_cpus=self.num_cpus, max_restarts=RESTARTS, max_task_retries=RESTARTS,
            **({"runtime_env": {"env_vars": env}} if env is not None else {}),
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
        here = ray.get_runtime_context().get_node_id()
        self._away = sorted({d["node_ip"] for d in described if d["node_id"] != here})
        """Addresses of the other machines replicas run on."""
        self._pinned: tuple[str, ...] | None = None
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
        """The replicas' model endpoint; for in-process models, a machine other than this one that replicas run on
        (``ray://ADDRESS``, a remote one first), for the data-use guard to judge; None when all run here."""
        if self._endpoint is not None or not self._away:
            return self._endpoint
        remote = [ip for ip in self._away if not is_local_address(ip)]
        ip = (remote or self._away)[0]
        return f"ray://[{ip}]" if ":" in ip else f"ray://{ip}"

    def pin(self, addresses: Sequence[str]) -> None:
        """Pin every replica's connections to ``addresses``, which the guard checked from this machine: only when
        every replica runs here. For in-process models there is nothing to pin (the guard judged the machines)."""
        if self._endpoint is None:
            return
        if self._away:
            raise BackendError(
                f"Replicas of {self.uri} run on other machines ({', '.join(self._away)}), where {self._endpoint} "
                "may be another host than the one checked here; run them on this machine (--ray alone)."
            )
        self._pinned = tuple(addresses)

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
                response = await self.replicas[n].generate.remote(request, self._pinned)
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
