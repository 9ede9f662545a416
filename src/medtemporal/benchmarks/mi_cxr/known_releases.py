"""Released MI-CXR question files known to be ``open`` (`medtemporal.provenance.release_licence`): none yet.

The full released ``micxr_test.jsonl`` (5,311 lines) has not been available to review here, only its
first four lines, so no checksum can be listed: an imported question file is ``credentialed``. Its
questions and options are written from MIMIC-Ext-CXR-QBA scene graphs of MIMIC-CXR studies; to list
the file, review its text for quoted report or annotation text and add its sha256 with its source.
"""

from __future__ import annotations

from medtemporal.provenance import Release

RELEASES: tuple[Release, ...] = ()
"""Reviewed releases (none)."""
