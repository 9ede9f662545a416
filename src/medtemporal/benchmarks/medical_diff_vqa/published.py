"""Medical-Diff-VQA's published results: none transcribed.

The paper's main text (Hu et al., KDD 2023) was not reachable; EKAID's repository (``Holipori/EKAID`` 1e5dd0d)
holds the evaluation code but no results (FACTS §5.2). Only numbers a paper prints are kept here, so the report
shows none and says why; to compare with the paper, score on its test set (``--split ekaid``) and read the EKAID
section of the report.
"""

from __future__ import annotations

from medtemporal.published import NoneFound, PublishedTable

TABLES: tuple[PublishedTable, ...] = ()
NONE = NoneFound("the Medical-Diff-VQA paper's text was not reachable and EKAID's repository holds no results, so "
                 "no published row is shown")
