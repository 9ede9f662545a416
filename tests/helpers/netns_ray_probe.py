"""A credentialed run on a local Ray cluster (``--ray``) inside a loopback-only namespace: allowed, and Ray's
start-up asks no cloud metadata server (issue 24, point 4).

Run as ``python netns_ray_probe.py OUT`` in a namespace whose ``lo`` also carries 169.254.169.254, the
address cloud metadata servers answer on, where a listener counts connections. First ``medtemporal run
--ray`` of a credentialed benchmark against the loopback fake server; then, as a control, a Ray cluster
started as Ray's documentation does (``ray.init(include_dashboard=False)``), which must be seen probing.
Prints one JSON object.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.fake_openai import TEST_API_KEY, FakeOpenAI  # noqa: E402
from helpers.tiny import make_tiny_benchmark  # noqa: E402

from medtemporal.cli import main  # noqa: E402

METADATA = "169.254.169.254"
probes: list[str] = []


def listen(port: int) -> None:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((METADATA, port))
    server.listen(64)
    while True:
        conn, _ = server.accept()
        probes.append(f"{METADATA}:{port}")
        conn.close()


def main_() -> None:
    out = Path(sys.argv[1])
    for port in (80, 443):
        threading.Thread(target=listen, args=(port,), daemon=True).start()
    os.environ["OPENAI_API_KEY"] = TEST_API_KEY
    results: dict[str, object] = {}
    with FakeOpenAI.start() as fake:
        bench = make_tiny_benchmark(out / "bench", n=4, licence="credentialed")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["run", str(bench), "--model", fake.uri(), "--out", str(out / "run"), "--ray", "--replicas",
                         "1", "--no-progress", "--no-score", "--no-cache"])
        time.sleep(5)  # the dashboard probes right after it starts: long over by now
        results["run"] = {"code": code, "stderr": err.getvalue()[-2000:], "answered": fake.stats()["answered"],
                          "probes": len(probes)}
        import ray

        ray.shutdown()
        ray.init(include_dashboard=False, log_to_driver=False)  # the control: Ray as it starts by default
        deadline = time.monotonic() + 60
        while not probes and time.monotonic() < deadline:
            time.sleep(0.5)
        results["control"] = {"probes": len(probes)}
        ray.shutdown()
    print(json.dumps(results))


if __name__ == "__main__":
    main_()
