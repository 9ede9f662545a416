"""ELTLM's published results (seeds/003): Table 2, the main results, row by row.

ROUGE-L is the F1 score; Accuracy and Completeness are the fractions of answers GPT-4o-mini judged 1 (appendix A,
Table 3), as fractions with three decimals. Every model answered the paper's 913 questions zero-shot, images in
sequence (its Table 7 prompts); the paper's per-length and ablation results are figures only (Figs. 3 and 4).
"""

from __future__ import annotations

from medtemporal.published import PublishedColumn, PublishedRow, PublishedTable

PAPER = "the ELTLM paper"
SOURCE = "seeds/003"
"""The paper's text in ``../shared/seeds`` the rows cite by line."""
TABLE_2 = PublishedTable(
    PAPER, "Table 2", "Main results on longitudinal capabilities",
    "zero-shot, images in time order, judged by GPT-4o-mini with the paper's rubric",
    (PublishedColumn("Perception ROUGE-L", "task:perception", "rouge_l_f1", scale=1.0),
     PublishedColumn("Perception Acc", "task:perception", "judge_accuracy", scale=1.0),
     PublishedColumn("Perception Comp", "task:perception", "judge_completeness", scale=1.0),
     PublishedColumn("Reasoning ROUGE-L", "task:reasoning", "rouge_l_f1", scale=1.0),
     PublishedColumn("Reasoning Acc", "task:reasoning", "judge_accuracy", scale=1.0),
     PublishedColumn("Reasoning Comp", "task:reasoning", "judge_completeness", scale=1.0)), (
    PublishedRow('GPT-5', (0.145, 0.359, 0.271, 0.171, 0.639, 0.699), line=119, section='Generalist Models'),
    PublishedRow('GPT-4o-2024-05-13', (0.158, 0.066, 0.247, 0.179, 0.375, 0.39), line=120, section='Generalist Models'),
    PublishedRow('Gemini-2.5-Pro', (0.175, 0.111, 0.22, 0.206, 0.36, 0.37), line=121, section='Generalist Models'),
    PublishedRow('Claude-3.7-Sonnet', (0.172, 0.146, 0.206, 0.221, 0.505, 0.42), line=122, section='Generalist Models'),
    PublishedRow('Qwen-VL-Max', (0.177, 0.098, 0.233, 0.231, 0.5, 0.585), line=123, section='Generalist Models'),
    PublishedRow('Qwen2.5-VL-72B-Instruct', (0.137, 0.057, 0.254, 0.177, 0.38, 0.402), line=124, section='Generalist Models'),
    PublishedRow('Doubao-1.5-Vision-250328', (0.099, 0.022, 0.265, 0.139, 0.225, 0.245), line=125, section='Generalist Models'),
    PublishedRow('Lingshu-7B', (0.147, 0.058, 0.274, 0.18, 0.35, 0.3), line=127, section='Medical Models'),
    PublishedRow('HuatuoGPT-Vision-7B', (0.116, 0.038, 0.309, 0.116, 0.325, 0.67), line=128, section='Medical Models'),
    PublishedRow('MedGemma-4B-it', (0.186, 0.042, 0.368, 0.221, 0.35, 0.525), line=129, section='Medical Models'),
), source=SOURCE, digits=3)
TABLES = (TABLE_2,)
"""The paper's one table of scores."""
