"""ClinicalSkillQA's published results (seeds/002): Table 2, the official leaderboard of the shared task, row by row.

Teams, not models: each row is a team's submitted system (§6 describes four of them) scored by the organisers on
the hidden 200-instance test set (CodaBench). Overall Score is on a 0–100 scale; the components are fractions
rounded to two decimals, while the overall used unrounded values (footnote 4); FBK's row does not follow from its
rounded components (FACTS §2.2).
"""

from __future__ import annotations

from medtemporal.published import PublishedColumn, PublishedRow, PublishedTable

PAPER = "the ClinicalSkillQA overview paper"
SOURCE = "seeds/002"
"""The paper's text in ``../shared/seeds`` the rows cite by line."""
TABLE_2 = PublishedTable(
    PAPER, "Table 2", "Official results on the ClinicalSkillQA test set",
    "each team's own system, scored by the organisers on the hidden test set",
    (PublishedColumn("Overall Score", "overall", "skillqa_overall"),
     PublishedColumn("Task Accuracy", "overall", "accuracy", scale=1.0),
     PublishedColumn("Pairwise Accuracy", "overall", "pairwise_accuracy", scale=1.0),
     PublishedColumn("BERTScore F1", "overall", "skillqa_rationale_bertscore", scale=1.0)), (
    PublishedRow('ZZUNLP', (71.43, 0.63, 0.86, 0.79), line=189),
    PublishedRow('qqpprun', (63.88, 0.58, 0.84, 0.55), line=190),
    PublishedRow('FBK', (59.45, 0.47, 0.72, 0.76), line=191),
    PublishedRow('nance', (56.62, 0.41, 0.75, 0.79), line=192),
    PublishedRow('VerbaNexAI', (37.96, 0.17, 0.6, 0.71), line=193),
    PublishedRow('DLNLP', (30.44, 0.1, 0.55, 0.57), line=194),
    PublishedRow('zhkun', (28.71, 0.03, 0.51, 0.74), line=195),
), source=SOURCE)
TABLES = (TABLE_2,)
"""The paper's one table of scores."""
