"""``config.json`` of a run: everything needed to know, and redo, what ran.

Keys: ``benchmark`` (path, name, version, manifest sha256, licence),
``model`` (URI, identity, load settings such as device map or tensor parallelism, server-reported names), ``protocol`` (name,
options, and the hash of every prompt template it may use), ``generation``
(the `GenerateConfig`), ``tasks`` and ``limit`` (which items),
``repeats`` (answers per item; not part of the resume identity, so a run may
grow more repeats), ``allow_remote_data``, ``medtemporal_version``, ``git_revision``,
``started_at``, ``finished_at`` and ``packages``. Never an API key: backends
keep keys to themselves. `RESUME_KEYS` say what a resumed run must share.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import medtemporal
from medtemporal.backends.base import Backend, GenerateConfig
from medtemporal.backends.uri import shown_uri
from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError
from medtemporal.schema import read_json_object
from medtemporal.writes import write_atomic

CONFIG = "config.json"
PACKAGES = ("medtemporal", "openai", "torch", "transformers", "vllm", "numpy", "pillow", "pydantic")

RESUME_KEYS = (
    ("benchmark", "manifest_sha256"),
    ("model", "uri"),
    ("model", "identity"),
    ("protocol", "name"),
    ("protocol", "options"),
    ("protocol", "templates"),
    ("generation",),
)
"""What must match for a run folder to be resumed rather than refused."""


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def git_revision() -> str | None:
    """``git describe --always --dirty`` of the medtemporal source checkout, if it is one."""
    package = Path(medtemporal.__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(package), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    if git("ls-files", "--error-unmatch", "__init__.py") is None:
        return None  # installed from a wheel, or inside someone else's repository
    return git("describe", "--always", "--dirty", "--abbrev=40")


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that shape results."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def build_config(
    bench: Benchmark,
    backend: Backend,
    protocol: str,
    templates: dict[str, str],
    generation: GenerateConfig,
    allow_remote_data: bool,
    limit: int | None = None,
    *,
    protocol_options: dict[str, Any] | None = None,
    tasks: Sequence[str] | None = None,
    repeats: int = 1,
) -> dict[str, Any]:
    """The config of a run starting now (``finished_at`` None)."""
    m = bench.manifest
    return {
        "benchmark": {
            "path": str(bench.path),
            "name": m.benchmark,
            "version": m.version,
            "manifest_sha256": bench.manifest_hash,
            "licence": m.licence,
        },
        "model": {"uri": backend.uri, "identity": backend.identity(), "settings": backend.settings(), "served": []},
        "protocol": {
            "name": protocol,
            "options": {k: shown_uri(v) if isinstance(v, str) else v  # a captioner's URI: no credentials
                        for k, v in sorted((protocol_options or {}).items())},
            "templates": dict(sorted(templates.items())),
        },
        "generation": asdict(generation),
        "tasks": sorted(tasks) if tasks else None,
        "limit": limit,
        "repeats": repeats,
        "allow_remote_data": allow_remote_data,
        "medtemporal_version": medtemporal.__version__,
        "git_revision": git_revision(),
        "started_at": now(),
        "finished_at": None,
        "packages": package_versions(),
    }


def _get(config: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = config
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def read_config(folder: Path) -> dict[str, Any] | None:
    """The config of an existing run folder, or None when there is none."""
    path = folder / CONFIG
    if not path.is_file():
        return None
    return read_json_object(path, "restore it or run into a new --out folder")


def check_resumable(folder: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
    """Refuse to add predictions to a folder that holds a run of something else.

    Raises:
        InvalidInputError: naming the first setting that differs.
    """
    for path in RESUME_KEYS:
        before, after = _get(old, path), _get(new, path)
        if before != after:
            name = ".".join(path)
            raise InvalidInputError(
                f"{folder} holds a run with another {name} ({json.dumps(before)[:120]} there, "
                f"{json.dumps(after)[:120]} now); run the same command as before to resume, "
                "or choose a new --out folder."
            )


def write_config(folder: Path, config: dict[str, Any]) -> None:
    """Write ``config.json`` atomically."""
    write_atomic(folder / CONFIG, json.dumps(config, indent=2, ensure_ascii=False) + "\n", sync=True)
