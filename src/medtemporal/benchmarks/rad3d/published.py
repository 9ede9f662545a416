"""3D-RAD's published results (seeds/004): Tables 3 and 4 (fine-tuned and zero-shot) and Table 5 (appendix A.6,
the 4B model by training-data size), as printed: models as columns, one line per task and metric.

Tasks are named as the paper names them; the release numbers them otherwise (Anomaly Detection is the release's
task2, Image Observation its task1: FACTS §1.1). Values are percent; open tasks' BLEU is BLEU-1 and "Rouge"
ROUGE-1, as the release's evaluator computes them; accuracy is the mean over a task's subtasks ("macro"), each
column's counterpart in a run being that mean (group ``macro:<task>``; closed tasks under the release's rule,
the variant ``as released``). **Table 5 swaps Tasks 5 and 6** against Tables 3 and 4 (its "Static" row holds
Table 3's Task 6 value and the other way round; FACTS §1.1): its rows are kept as printed, and its columns map
the printed labels to the tasks the values belong to.
"""

from __future__ import annotations

from medtemporal.published import PublishedColumn, PublishedRow, PublishedTable

PAPER = "the 3D-RAD paper"
SOURCE = "seeds/004"
"""The paper's text in ``../shared/seeds`` the rows cite by line."""
RELEASED = "as released"
OPEN = (("Anomaly Detection", "task2"), ("Image Observation", "task1"), ("Medical Computation", "task3"))
"""The open subtasks in the tables' column order."""
CLOSED = (("Existence Detection", "task4"), ("Static Temporal Diagnosis", "task5"),
          ("Longitudinal Temporal Diagnosis", "task6"))
SWAPPED = (CLOSED[0], (CLOSED[1][0], "task6"), (CLOSED[2][0], "task5"))
"""Table 5's closed columns: its "Static" values are Task 6's and the other way round (module doc)."""


def columns(meteor: bool = False, closed: tuple[tuple[str, str], ...] = CLOSED) -> tuple[PublishedColumn, ...]:
    """The tables' columns: BLEU, Rouge (METEOR in Table 5) and BERTScore of each open subtask, then each closed
    subtask's accuracy under the release's rule."""
    metrics = [("BLEU", "rad3d_bleu_1"), ("Rouge", "rad3d_rouge_1"), *([("Meteor", "rad3d_meteor")] if meteor else []),
               ("BERTScore", "bertscore_f1")]
    return (*(PublishedColumn(f"{name} {label}", f"macro:{task}", metric) for name, task in OPEN
              for label, metric in metrics),
            *(PublishedColumn(f"{name} Accuracy", f"macro:{task}", "accuracy", variant=RELEASED)
              for name, task in closed))


TABLE_3 = PublishedTable(PAPER, "Table 3", "M3D before and after fine-tuning on 3D-RAD-T (M3D-RAD)",
                         "M3D zero-shot and fine-tuned; macro over subtasks; your runs' accuracy under the "
                         "release's rule (\"<gold>.\" in the output: a bare letter scores 0)", columns(), (
    PublishedRow('M3D (Llama2-7B)', (10.69, 20.82, 86.61, 9.1, 18.64, 86.07, 15.95, 23.24, 91.5, 18.0, 25.47, 24.17), line=66),
    PublishedRow('M3D-RAD (Llama2-7B)', (31.28, 39.12, 90.0, 25.25, 33.76, 89.16, 30.54, 36.06, 94.65, 81.09, 51.2, 74.78), line=66),
    PublishedRow('M3D (Phi3-4B)', (16.31, 23.19, 86.92, 15.06, 23.19, 87.11, 2.55, 5.63, 85.74, 40.25, 25.4, 24.31), line=66),
    PublishedRow('M3D-RAD (Phi3-4B)', (39.66, 50.52, 92.19, 33.28, 42.45, 90.72, 20.85, 30.38, 93.25, 82.43, 49.3, 74.77), line=66),
), source=SOURCE, transposed=True, lines=(67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78))
TABLE_4 = PublishedTable(PAPER, "Table 4", "Zero-shot evaluation of existing 3D medical VLMs",
                         "zero-shot, each model's released checkpoint; macro over subtasks; your runs' accuracy "
                         "under the release's rule", columns(), (
    PublishedRow('RadFM', (13.48, 19.14, 87.16, 11.0, 17.62, 86.76, 3.34, 6.62, 86.85, 29.2, 44.11, 42.99), line=84),
    PublishedRow('M3D (Llama2-7B)', (10.69, 20.82, 86.61, 9.1, 18.64, 86.07, 15.95, 23.24, 91.5, 18.0, 25.47, 24.17), line=84),
    PublishedRow('M3D (Phi3-4B)', (16.31, 23.19, 86.92, 15.06, 23.19, 87.11, 2.55, 5.63, 85.74, 40.25, 25.4, 24.31), line=84),
    PublishedRow('OmniV (Qwen2.5-1.5B)', (16.42, 26.69, 88.29, 13.47, 25.72, 88.21, 2.52, 7.88, 85.66, 28.66, 22.96, 24.23), line=84),
), source=SOURCE, transposed=True, lines=(85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96))
TABLE_5 = PublishedTable(PAPER, "Table 5", "M3D (Phi3-4B) fine-tuned on 1%, 10% and 100% of 3D-RAD-T",
                         "zero-shot and fine-tuned on part of the training set; macro over subtasks; Tasks 5 and 6 "
                         "printed swapped; your runs' accuracy under the release's rule", columns(meteor=True, closed=SWAPPED), (
    PublishedRow('Zero-shot', (16.31, 23.19, 15.65, 86.92, 15.06, 23.19, 16.56, 87.11, 2.55, 5.63, 4.2, 85.74, 40.25, 24.31, 25.4), line=255),
    PublishedRow('1%', (20.54, 24.63, 19.06, 88.23, 21.1, 26.03, 21.18, 88.13, 5.65, 6.91, 4.53, 84.89, 80.85, 61.01, 41.17), line=255),
    PublishedRow('10%', (29.35, 38.25, 26.92, 89.81, 30.54, 37.53, 29.12, 89.78, 15.23, 23.76, 14.06, 90.7, 80.93, 74.19, 48.11), line=255),
    PublishedRow('100%', (39.66, 50.52, 36.35, 92.19, 33.28, 42.45, 31.38, 90.72, 20.85, 30.38, 16.92, 93.25, 82.43, 74.77, 49.3), line=255),
), source=SOURCE, transposed=True, lines=(256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270))
TABLES = (TABLE_3, TABLE_4, TABLE_5)
"""Every table the paper prints of models' scores on the benchmark set."""
