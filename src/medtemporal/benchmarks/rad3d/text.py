"""Question wording of Tasks 4–6, as the released test CSVs word them.

The release holds 18 Task 4 templates, 17 Task 5 templates and, for Task 6,
18 history sentences × 17 (interpretation, question) pairs joined by a fixed
note (FACTS §1.1; the paper's "three modular parts", ``seeds/004`` A.14).
The phrasings below were read off the released CSVs with the label and the
history masked; labels appear in lower case, histories as ``[0, 1, ...]``.
A builder picks one phrasing per question with its seeded random stream.
"""

from __future__ import annotations

import random
from typing import Sequence

EXISTENCE = (
    "Can signs of {label} be recognized on the CT scan?", "Can {label} be clearly seen on the CT scan?",
    "Can {label} be detected on the CT scan?", "Can {label} be observed on the CT scan?",
    "Does the CT scan demonstrate {label}?", "Does the CT scan exhibit {label}?", "Does the CT scan reveal {label}?",
    "Does the CT scan suggest {label}?", "Does this CT image present {label}?", "Does this CT image show {label}?",
    "Is there any presence of {label} on the CT scan?", "Is there evidence of {label} on the CT images?",
    "Is {label} apparent on the CT images?", "Is {label} confirmed by the CT findings?",
    "Is {label} identifiable on the CT scan?", "Is {label} noted on the CT images?",
    "Is {label} present on the CT scan?", "Is {label} visible on the CT images?",
)

STATIC = (
    "According to the CT scan, how would you categorize the {label}?",
    "According to the CT scan, what is the current status of {label}?",
    "After reviewing the CT scan, how would you interpret the presence of {label}?",
    "Based on the CT scan, what is the condition of the {label}?",
    "Based on the CT scan, what is the current status of the {label}?",
    "Based on the CT scan, what is your evaluation of the {label}?",
    "Based on the current CT scan, how would you classify the {label}?",
    "Considering the CT scan, what is your assessment of the {label}?",
    "Given the present CT findings, what is the nature of the {label}?",
    "How should we interpret the {label} from the current CT findings?",
    "How would you categorize the {label} based on the CT scan?",
    "How would you classify the {label} based on the current CT scan?",
    "How would you classify the {label} observed in the current CT scan?",
    "How would you classify the {label} seen in the CT imaging?",
    "In light of the CT findings, how should we interpret the {label}?",
    "In light of the current CT imaging, how should we classify the {label}?",
    "With reference to the CT scan, what is the classification for {label}?",
)

HISTORY = (
    "Before now, {label} showed {history}.", "Earlier CTs showed {label} as: {history}.",
    "Earlier {label} sequences: {history}.", "Historical {label} status: {history}.", "In past, {label} was: {history}.",
    "Old sequences for {label}: {history}.", "Past sequences of {label}: {history}.",
    "Previous {label} states: {history}.", "Prior {label} timeline: {history}.",
    "Recorded sequences for {label}: {history}.", "Scans showed {label} as: {history}.",
    "Sequence history for {label}: {history}.", "{label} condition history: {history}.",
    "{label} had: {history} in earlier scans.", "{label} over time: {history}.", "{label} progression: {history}.",
    "{label} sequence was: {history}.", "{label} trend was: {history}.",
)
"""Part 1 of a Task 6 question: the label's history."""

NOTE = "(Note: 0 indicates absence, and 1 indicates presence.)"
"""Part 2: the fixed note."""

INTERPRET_AND_ASK = (
    "Based on sequence history and current CT. What lesion category applies to {label} in the current CT?",
    "CT confirms what sequences suggest. How has {label} progressed according to its temporal sequence?",
    "CT reflects pattern of prior sequences. How has {label} evolved from earlier scan sequences to now?",
    "CT status follows sequence progression. What type of lesion is {label} now, given its temporal sequence?",
    "Classification uses sequences and current image. From sequence history to now, what best describes {label}?",
    "Diagnosis combines sequence history and CT. How is {label} classified now using past sequence data?",
    "Final label from history and CT. What does the CT show for {label} considering its sequence history?",
    "From multi-stage sequences and present CT. Based on the temporal sequence, what is the present status of {label}?",
    "History and CT decide lesion category. What does {label} currently represent, based on past sequences?",
    "Lesion behavior from past to CT. How does {label} appear now compared to its sequence history?",
    "Lesion judged by sequences and scan. From prior sequences to now, what is the CT-based status of {label}?",
    "Lesion state from timeline and CT. How has {label} changed from past sequences to the current CT?",
    "Multi-phase sequences guide CT-based judgment. What is the current CT assessment of {label} based on prior "
    "sequences?",
    "Past sequences and CT determine lesion type. Based on past sequences, what is the current condition of {label}?",
    "Sequence evolution and CT define outcome. What does the current CT show about {label} based on earlier sequences?",
    "Sequence trend plus current CT defines status. Given its sequence history, what is {label} in the current CT?",
    "Stage-wise sequences + current CT = status. What is the current status of {label} based on previous sequences?",
)
"""Part 3: an interpretation sentence and the question (paired as in the release)."""


def history_text(history: Sequence[int]) -> str:
    """``[0, 1, 0]`` as the release writes a history."""
    return "[" + ", ".join(str(int(v)) for v in history) + "]"


def existence_question(label: str, rng: random.Random) -> str:
    """A Task 4 question about ``label``."""
    return rng.choice(EXISTENCE).format(label=label.lower())


def static_question(label: str, rng: random.Random) -> str:
    """A Task 5 question about ``label`` (no history)."""
    return rng.choice(STATIC).format(label=label.lower())


def longitudinal_question(label: str, history: Sequence[int], rng: random.Random) -> str:
    """A Task 6 question: history sentence, note, interpretation and question."""
    first = rng.choice(HISTORY).format(label=label.lower(), history=history_text(history))
    last = rng.choice(INTERPRET_AND_ASK).format(label=label.lower())
    return f"{first} {NOTE} {last}"
