"""Issue 42, points 4 and 6, where the "remote" addresses really listen: run inside a loopback-only namespace whose
``lo`` also carries a private address (PRIVATE, a cloud provider's private endpoint) and a public one (REMOTE).

Run as ``python netns_private_probe.py PRIVATE REMOTE OUT``; sinks on both count every byte. Point 6: a credentialed
run against PRIVATE is refused unless ``MEDTEMPORAL_LOCAL_NETWORKS`` declares its network (the control, which
reaches it). Point 4: ``score --judge`` of a run made on another ``--image-root`` is refused before REMOTE gets a
byte; the control, the same run on the benchmark's verified phantom, reaches it. Prints one JSON object.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.eltlm import ANSWER, make_open_benchmark_on_phantom  # noqa: E402
from helpers.netns_probe import Sink  # noqa: E402
from helpers.tiny import make_tiny_benchmark  # noqa: E402

from medtemporal.cli import main as cli  # noqa: E402

PORT = 18090


def _cli(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli(list(args))
    return code, err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""


def main() -> None:
    private, remote, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    os.environ["OPENAI_API_KEY"] = "sk-netns-probe"
    results: dict[str, object] = {}
    sinks = {name: Sink(host, PORT) for name, host in (("private", private), ("remote", remote))}
    for sink in sinks.values():
        threading.Thread(target=sink.serve_forever, daemon=True).start()
    bench = make_tiny_benchmark(out / "cred", n=2, licence="credentialed")
    quick = ["--no-progress", "--no-cache", "--no-score", "--attempts", "1", "--timeout", "3"]
    for case, networks in (("private", None), ("private_control", "10.0.0.0/8")):
        os.environ.pop("MEDTEMPORAL_LOCAL_NETWORKS", None)
        if networks:
            os.environ["MEDTEMPORAL_LOCAL_NETWORKS"] = networks
        before = sinks["private"].received
        code, line = _cli("run", str(bench), "--model", f"openai+http://{private}:{PORT}/v1:m", "--out",
                          str(out / case), *quick)
        results[case] = {"code": code, "error": line, "bytes": sinks["private"].received - before}
    os.environ.pop("MEDTEMPORAL_LOCAL_NETWORKS", None)
    open_bench, data = make_open_benchmark_on_phantom(out / "open")
    shutil.copytree(data, out / "copy")
    for case, root in (("judge", ["--image-root", str(out / "copy")]), ("judge_control", [])):
        run = out / case
        _cli("run", str(open_bench), "--model", f"baseline:constant-{ANSWER}", "--out", str(run), "--no-progress",
             "--no-cache", *root)
        before = sinks["remote"].received
        code, line = _cli("score", str(run), "--judge", f"openai+http://{remote}:{PORT}/v1:judge", "--no-cache",
                          "--judge-attempts", "1", "--judge-timeout", "3")
        results[case] = {"code": code, "error": line, "bytes": sinks["remote"].received - before}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
