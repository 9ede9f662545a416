"""The wording of phantom MMXU questions and options, in the released file's style.

The release asks about a named region ("What change is observed in the right lung region on comparing
the two chest X-ray images?") and words each option as a short statement of one change ("Right pleural
effusion remains unchanged.", "The right lung shows new pulmonary infiltrates."). Its options betray the
answer through their wording (FACTS §5.3: extreme words mark distractors, hedged ones answers); here
every template is chosen at random whether or not its option is right, so the wording says only which
finding and which change an option states.
"""

from __future__ import annotations

import random

QUESTIONS = (
    "What change is observed in the {region} when comparing the prior and the current chest X-ray images?",
    "How has the {region} changed between the two chest X-ray images of the patient?",
    "What is the condition of the {region} across the two chest CXR images of the patient?",
    "Compared with the prior image, what change is seen in the {region} on the current chest X-ray?",
)
"""Question templates (the release's phrasings, region only: the finding is for the images to show)."""

NOUNS = {
    "pleural effusion": "{side} pleural effusion",
    "pneumothorax": "{side} pneumothorax",
    "consolidation": "consolidation in the {side} lung",
    "lung opacity": "opacity in the {side} lung",
    "atelectasis": "atelectasis in the {side} lung",
    "elevated hemidiaphragm": "elevation of the {side} hemidiaphragm",
    "sub-diaphragmatic air": "free air under the {side} hemidiaphragm",
    "pulmonary edema": "pulmonary edema",
    "vascular congestion": "pulmonary vascular congestion",
}
"""Finding → its noun phrase in an option (``{side}``: the region's side)."""

CHANGES = {
    "unchanged": ("The {noun} is unchanged.", "No change in the {noun}.", "The {noun} remains stable."),
    "increased": ("The {noun} has increased.", "The {noun} has worsened.", "Worsening of the {noun}."),
    "new": ("New {noun} has appeared.", "The {noun} is new since the prior image."),
    "decreased": ("The {noun} has decreased.", "The {noun} has improved.", "Improvement of the {noun}."),
    "resolved": ("The {noun} has resolved.", "The {noun} is no longer seen.", "Resolution of the {noun}."),
}
"""Change word → option templates."""


def question_text(region: str, rng: random.Random) -> str:
    """A question about ``region``."""
    return rng.choice(QUESTIONS).format(region=region)


def option_text(entity: str, region: str, side: str | None, change: str, rng: random.Random) -> str:
    """An option stating that ``entity`` in ``region`` (on ``side``) shows ``change``.

    >>> option_text("pleural effusion", "right lung", "right", "unchanged", random.Random(1))
    'The right pleural effusion is unchanged.'
    """
    noun = NOUNS[entity].format(side=side or "")
    text = rng.choice(CHANGES[change]).format(noun=noun)
    return text[0].upper() + text[1:]
