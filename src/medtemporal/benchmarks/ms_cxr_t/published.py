"""MS-CXR-T's published results: none transcribed.

The paper's main text (Bannur et al., BioViL-T, CVPR 2023) was not reachable, nor were CheXbench's or MedGemma's
tables; the code read (CheXagent's ``evaluation_chexbench``, MedST's ``temporal_test.py``) computes numbers but
prints none (FACTS §5.1). Only numbers a paper prints are kept here, so the report shows none and says why.
"""

from __future__ import annotations

from medtemporal.published import NoneFound, PublishedTable

TABLES: tuple[PublishedTable, ...] = ()
NONE = NoneFound("the MS-CXR-T paper's text (and CheXbench's and MedST's tables) was not reachable, so no published "
                 "row is shown")
