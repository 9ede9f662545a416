"""The config of a run starting now: a `medtemporal.runs.RunConfig` with the versions that shape results.

The folder's owner (`medtemporal.runs.RunFolder`) writes and reads it; this module only fills it in.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Mapping
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import medtemporal
from medtemporal.backends.base import Backend
from medtemporal.backends.uri import hide_credentials, short_name, shown_uri
from medtemporal.benchmark import Benchmark
from medtemporal.models import ModelEntry
from medtemporal.runner.options import RunOptions
from medtemporal.runs import BenchmarkRef, ModelRef, ProtocolRef, RunConfig

PACKAGES = ("medtemporal", "openai", "torch", "transformers", "vllm", "numpy", "pillow", "pydantic")


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


def requested_model(opts: RunOptions) -> dict[str, Any]:
    """The model options a run is asked for (`medtemporal.runs.ModelRef.requested`), as JSON, credentials hidden."""
    asked = {"max_pixels": opts.max_pixels, **dict(opts.backend_options or {})}
    return hide_credentials(json.loads(json.dumps(asked, sort_keys=True, default=str)))


def recorded_image_root(bench_root: Path, image_root: str | Path | None) -> str | None:
    """The image root a run records (`medtemporal.runs.RunConfig.image_root`): ``image_root`` resolved, or None
    where it is none or the benchmark's own (``bench_root``)."""
    if image_root is None:
        return None
    given = Path(image_root).expanduser().resolve()
    return None if given == bench_root.resolve() else str(given)


def build_config(
    bench: Benchmark,
    backend: Backend,
    protocol: str,
    protocol_options: Mapping[str, Any],
    templates: dict[str, str],
    opts: RunOptions,
    limit_rule: str,
    entry: ModelEntry | None = None,
) -> RunConfig:
    """The config of a run of ``opts`` (resolved) starting now (``finished_at`` None); ``entry`` is the registered
    model ``--model`` named, if any."""
    m = bench.manifest
    limited = opts.limit is not None or opts.limit_per_task is not None
    return RunConfig(
        benchmark=BenchmarkRef(path=str(bench.path), name=m.benchmark, version=m.version,
                               manifest_sha256=bench.manifest_hash, items_sha256=m.items_sha256, licence=m.licence),
        name=(opts.name or "").strip() or (entry.name if entry is not None else short_name(backend.uri)),
        model=ModelRef(uri=backend.uri, identity=backend.identity(), settings=backend.settings(),
                       requested=requested_model(opts)),
        model_entry=entry.name if entry is not None else None,
        protocol=ProtocolRef(name=protocol, options={k: shown_uri(v) if isinstance(v, str) else v  # no credentials
                                                     for k, v in sorted(protocol_options.items())},
                             templates=dict(sorted(templates.items()))),
        generation=asdict(opts.generation),
        tasks=sorted(opts.tasks) if opts.tasks else None,
        limit=opts.limit,
        limit_per_task=opts.limit_per_task,
        limit_rule=limit_rule if limited else None,
        repeats=opts.repeats,
        image_root=recorded_image_root(bench.image_root, opts.image_root),
        allow_remote_data=opts.allow_remote_data,
        medtemporal_version=medtemporal.__version__,
        git_revision=git_revision(),
        started_at=now(),
        packages=package_versions(),
    )
