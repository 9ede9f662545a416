"""Models that need their own code: each adapter is a backend (``maira2:HUB_ID``) that calls the model's documented
interface, registered beside the model's entry (`medtemporal.models.catalog`), never inside a family."""

from medtemporal.models.adapters import maira2

__all__ = ["maira2"]
