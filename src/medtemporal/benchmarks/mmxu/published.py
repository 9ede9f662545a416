"""MMXU's published results: none transcribed.

The paper (Mu et al., ACL 2025 Findings) was not reachable as text, and its release (``LinjieMu/MMXU`` 4b77721)
holds no results file: its prompt, extraction rule and per-model numbers were not found (FACTS §5.3). Only numbers
a paper prints are kept here, so the report shows none and says why.
"""

from __future__ import annotations

from medtemporal.published import NoneFound, PublishedTable

TABLES: tuple[PublishedTable, ...] = ()
NONE = NoneFound("the MMXU paper's results table could not be read as text: its repository, dataset card and "
                 "abstract hold no per-model numbers (the abstract says only that adding history gives \"at least "
                 "20%\"), so no published row is shown")
