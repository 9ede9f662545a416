"""Released TemMed-Bench files known to be ``open`` (`medtemporal.provenance.release_licence`): none.

The released JSON files are on a hub this project cannot reach, so none has been reviewed, and they
could not be ``open`` anyway: the report-generation references and the 17,144-entry knowledge corpus
are CheXpert Plus report text, which the Stanford AIMI agreement covers. An imported folder is
``credentialed``.
"""

from __future__ import annotations

from medtemporal.provenance import Release

RELEASES: tuple[Release, ...] = ()
"""Reviewed releases (none)."""
