"""The released ELTLM ``test.json``: known, reviewed, and ``credentialed`` (`medtemporal.provenance.release_licence`).

Source of the checksum: ``test.json`` as added to ``ChengFeng233/ELTLM-Bench`` in b7eeb3f (later deleted
there, 65545f5; the data moved to Hugging Face ``Chengfeng233/ELTLM-Bench``), Apache-2.0; md5 0e5dee0d…
as in FACTS.md §3.1, sha256 computed from that file.

Decision: the file is public, but 9 reasoning questions (indices 57, 60, 65, 69, 83, 94, 100, 102, 103)
quote raw FINDINGS text of MIMIC-CXR reports, which PhysioNet's data-use agreement covers whoever
republished it, and every question is about a MIMIC-CXR patient's studies. So a benchmark imported
from it is ``credentialed`` whatever images it points at (docs/eltlm.md, "Licence"); an edited or
other version of the file is ``credentialed`` too.
"""

from __future__ import annotations

from medtemporal.provenance import Release

RELEASES = (
    Release(
        name="test.json",
        sha256="bfa11b725096790bd14fdb0feec0a0e517d7b4fdfb03308f3a523bf921c9b9b0",
        licence="credentialed",
        source="ChengFeng233/ELTLM-Bench@b7eeb3f test.json (md5 0e5dee0d475b2b19343461908c6229d2), Apache-2.0",
        note="9 questions quote MIMIC-CXR report FINDINGS (indices 57, 60, 65, 69, 83, 94, 100, 102, 103)",
    ),
)
"""The one released file."""
