"""A second model a protocol calls besides the run's (a captioner, a date writer).

Named by URI; the runner opens it as a `medtemporal.backends.session.ModelSession` for the run's data
(guarded, cached and retried like the run's own model) and `bind`\\s it here. Without a URI, the run's
own ``generate`` is used.
"""

from __future__ import annotations

from medtemporal.backends.base import Request, Response
from medtemporal.backends.session import ModelSession
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.base import Generate


class SideModel:
    """Calls to the model ``uri`` (or to the run's model when ``uri`` is None)."""

    def __init__(self, uri: str | None) -> None:
        self.uri = uri
        self._session: ModelSession | None = None

    def bind(self, session: ModelSession) -> None:
        """Use ``session`` for this side model's calls (the runner opens it for the run's data)."""
        self._session = session

    async def generate(self, request: Request, run_generate: Generate) -> Response:
        """The response of the side model to ``request`` (cached, retried)."""
        if self.uri is None:
            return await run_generate(request)
        if self._session is None:
            raise InvalidInputError(f"The side model {self.uri} was not opened; run the protocol with "
                                    "`medtemporal run`, which opens it with the benchmark's data-use rules.")
        return await self._session.generate(request)

    async def aclose(self) -> None:
        """Close the side model's session."""
        if self._session is not None:
            await self._session.aclose()
            self._session = None
