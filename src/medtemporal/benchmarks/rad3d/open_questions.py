"""Open questions (Tasks 1–3) from report text by rules (the default, and the phantoms' path).

The paper generated open questions with an LLM from the Findings and
Impression text, then filtered them on five quality dimensions (``seeds/004``
§3.2, A.13). These rules are the offline replacement: each reads one pattern
of report sentence and asks one question whose answer is a span of it, so an
answer is always in the report. Patterns (case-insensitive, per sentence):

- Task 3 Diameter: ``… <entity> … diameter of <v> mm … in the <location>`` → "<v> mm";
- Task 3 Size: ``… <entity> … measuring <a>x<b> mm …`` → "<a>x<b> mm";
- Task 3 Thickness: ``… <entity> … thickness of <v> mm …`` → "<v> mm";
- Task 2 Abnormality_position / Abnormality_type, Task 1 Pathological_observation:
  ``<entity> is/are seen/observed/noted in the <location>.``;
- Task 2 Abnormality_feature: ``<entity> with <feature> is/are seen/observed/noted …``;
- Task 1 Anatomical_observation: ``The <organ> is <state>.``;
- Task 2 Diagnosis: the Impression's first sentence, when it has at most 12 words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE = re.compile(r"[^.]+\.")
_MEASURE = {
    "Diameter": re.compile(r"\b(?P<entity>(?:[a-z]+ ){0,3}?(?:nodule|lesion|mass|cyst|lymph node))\b[^.]*?diameter of "
                           r"(?P<v>\d+(?:\.\d+)?) ?mm(?:[^.]*?\bin the (?P<loc>[a-z ]+))?", re.I),
    "Size": re.compile(r"\b(?P<entity>(?:[a-z]+ ){0,3}?(?:nodule|lesion|mass|cyst|lymph node|hernia))\b[^.]*?measuring "
                       r"(?P<v>\d+(?:\.\d+)?x\d+(?:\.\d+)?) ?mm", re.I),
    "Thickness": re.compile(r"\b(?P<entity>(?:[a-z]+ ){0,3}?(?:effusion|thickening|wall))\b[^.]*?thickness of "
                            r"(?P<v>\d+(?:\.\d+)?) ?mm", re.I),
}
_SEEN = re.compile(r"^\s*(?:an? |the )?(?P<entity>[a-z][a-z ]+?)(?: with (?P<feat>[a-z ]+?))? (?:is|are) "
                   r"(?:seen|observed|noted) in the (?P<loc>[a-z ]+)\.$", re.I)
_ORGAN = re.compile(r"^\s*the (?P<organ>[a-z ]+?) (?:is|are) (?P<state>[a-z ]+)\.$", re.I)


@dataclass(frozen=True)
class OpenQA:
    """One open question: task id, subtask, question and short answer."""

    task: str
    subtask: str
    question: str
    answer: str


def _cap(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:]


def open_questions(findings: str, impression: str) -> list[OpenQA]:
    """Every rule's questions over one report, in sentence order (deterministic)."""
    out: list[OpenQA] = []
    for sentence in _SENTENCE.findall(findings or ""):
        s = sentence.strip()
        measured = False
        for subtask, pattern in _MEASURE.items():
            m = pattern.search(s)
            if m:
                measured = True
                entity = re.sub(r"^(?:an?|the)\s+", "", m["entity"].lower().strip())
                where = f" in the {m['loc'].strip()}" if m.groupdict().get("loc") else ""
                noun = {"Diameter": "diameter", "Size": "size", "Thickness": "thickness"}[subtask]
                out.append(OpenQA("task3", subtask, f"What is the {noun} of the {entity}{where}?", f"{m['v']} mm"))
        m = _SEEN.match(s)
        if m and not measured:
            entity, loc = m["entity"].lower(), m["loc"].lower()
            out.append(OpenQA("task2", "Abnormality_position", f"Where is the {entity} observed?", f"{_cap(loc)}."))
            out.append(OpenQA("task2", "Abnormality_type", f"What abnormality is observed in the {loc}?", f"{_cap(entity)}."))
            out.append(OpenQA("task1", "Pathological_observation", f"What is observed in the {loc}?", f"{_cap(entity)}."))
            if m["feat"]:
                out.append(OpenQA("task2", "Abnormality_feature", f"What feature does the {entity} in the {loc} show?",
                                  f"{_cap(m['feat'])}."))
        m = _ORGAN.match(s)
        if m:
            out.append(OpenQA("task1", "Anatomical_observation", f"How does the {m['organ'].lower()} appear?",
                              f"{_cap(m['state'])}."))
    first = _SENTENCE.findall(impression or "")
    if first and len(first[0].split()) <= 12:
        out.append(OpenQA("task2", "Diagnosis", "What is the most likely diagnosis based on this CT scan?",
                          first[0].strip()))
    return out
