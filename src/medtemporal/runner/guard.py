"""The data-use guard: credentialed data stays on this machine or the local network.

MIMIC-CXR, CheXpert Plus and CT-RATE come under credentialed agreements;
PhysioNet's forbids sharing the data with third-party services. A benchmark
whose manifest licence is ``credentialed`` is therefore only sent to
endpoints on a loopback or private address unless the user says otherwise
(``--allow-remote-data``).
"""

from __future__ import annotations

from medtemporal.backends.uri import is_local_endpoint
from medtemporal.errors import InvalidInputError


def check_data_use(benchmark: str, licence: str, endpoint: str | None, allow_remote_data: bool) -> None:
    """Refuse to send credentialed data to a remote endpoint unless explicitly allowed.

    Raises:
        InvalidInputError: in one sentence, naming the benchmark, the endpoint and the flag.
    """
    if licence != "credentialed" or endpoint is None or allow_remote_data or is_local_endpoint(endpoint):
        return
    raise InvalidInputError(
        f"Refusing to send benchmark {benchmark!r} (credentialed data) to {endpoint}, which is not a loopback or "
        "private address, because data-use agreements such as PhysioNet's forbid sharing it with third-party services; "
        "serve the model locally, or pass --allow-remote-data if your agreement permits this endpoint."
    )
