"""ELTLM's tasks and subtypes as the paper names them, for the report's glossary."""

GLOSSARY = {
    "perception": "Temporal Perception (the release's type g): what changed across the studies, open answer.",
    "reasoning": "Temporal Reasoning (the release's type t): why, or what the changes mean, open answer.",
    **{f"{n}_studies": f"Questions over {n} studies of one patient." for n in range(2, 6)},
}
