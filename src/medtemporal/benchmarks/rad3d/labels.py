"""The 18 CT-RATE labels, 3D-RAD's six tasks and the temporal category rule.

Sources (see ``docs/3d-rad.md``): the CT-RATE label file
``multi_abnormality_labels/valid_predicted_labels.csv`` (column order below);
the released test CSVs (task folders, subtask numbers, choice texts); the
paper's appendix on temporal categories (``seeds/004`` lines 366–378).
"""

from __future__ import annotations

from typing import Sequence

from medtemporal.sources.ct_rate import LABELS

BENCHMARK = "3d-rad"
VERSION = "1"


EXISTENCE_ORDER: tuple[str, ...] = tuple(sorted(LABELS))
"""Task 4 subtask numbers 1..18 follow the alphabetical order of the labels (the released CSVs)."""

TEMPORAL_LABELS: tuple[str, ...] = tuple(label for label in LABELS if label != "Medical material")
"""Tasks 5 and 6 drop Medical material (paper A.14) and use the other 17."""

LETTERS_BH: tuple[str, ...] = tuple("bcdefgh")
"""Scan letters that have a history; Tasks 5 and 6 subtask k is letter ``LETTERS_BH[k - 1]``."""

TEMPORAL_OPTIONS: dict[str, str] = {
    "A": "Refractory Lesion (Persistent or recurrent, now present)",
    "B": "Resolved Lesion (Previously present or recurrent, now absent)",
    "C": "New Lesion (Absent previously, now present)",
    "D": "No Abnormality (Always absent)",
}
"""The fixed choices of every Task 5 and Task 6 row of the release."""

EXISTENCE_OPTIONS: dict[str, str] = {"A": "Yes", "B": "No"}
"""Task 4's choices (the release also has ``C = D = "-"``, which are not options and are dropped)."""

TASKS: dict[str, tuple[int, str, str]] = {
    "task1": (1, "Task1_Image_Observation", "Image Observation"),
    "task2": (2, "Task2_Anomaly_Detection", "Anomaly Detection"),
    "task3": (3, "Task3_Medical_Computation", "Medical Computation"),
    "task4": (4, "Task4_Existence_Detection", "Existence Detection"),
    "task5": (5, "Task5_Static_Temporal_Diagnosis", "Static Temporal Diagnosis"),
    "task6": (6, "Task6_Longitudinal_Temporal_Diagnosis", "Longitudinal Temporal Diagnosis"),
}
"""Task id → (number, release folder, name). Numbers and names follow the release folders, whose
Task 1 and 2 names are swapped relative to the paper's text (FACTS §1.1)."""

OPEN_SUBTASKS: dict[str, tuple[str, ...]] = {
    "task1": ("Anatomical_observation", "Pathological_observation"),
    "task2": ("Abnormality_feature", "Abnormality_position", "Abnormality_type", "Diagnosis"),
    "task3": ("Diameter", "Size", "Thickness"),
}
"""Open tasks' subtasks in release order (file names; subtask numbers 1..n)."""

OPEN_TASKS = tuple(OPEN_SUBTASKS)
CLOSED_TASKS = ("task4", "task5", "task6")


def temporal_subtype(task: str, letter: str) -> str:
    """Subtype name of a Task 5/6 item: ``task5_b`` (names must be unique across tasks)."""
    return f"{task}_{letter}"


def category(history: Sequence[int], current: int) -> str:
    """The temporal category letter of a label, by the released rule (FACTS §1.2).

    Any 1 anywhere in the earlier scans → Refractory (A) if present now, else Resolved (B);
    all earlier 0 → New (C) if present now, else No Abnormality (D).

    >>> category([0, 1, 0], 1), category([1], 0), category([0, 0], 1), category([0], 0)
    ('A', 'B', 'C', 'D')
    """
    if not history:
        raise ValueError("a temporal category needs at least one earlier scan")
    if any(history):
        return "A" if current else "B"
    return "C" if current else "D"


def find_label(text: str, labels: Sequence[str] = LABELS) -> str | None:
    """The label named in ``text`` (case-insensitive, longest name first), or None."""
    low = text.lower()
    for label in sorted(labels, key=len, reverse=True):
        if label.lower() in low:
            return label
    return None
