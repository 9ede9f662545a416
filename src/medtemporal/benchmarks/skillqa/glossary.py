"""ClinicalSkillQA's task and subtypes as the paper names them, for the report's glossary."""

GLOSSARY = {
    "ordering": "Order the shuffled key frames of a clinical-skill video and explain the order.",
    **{f"{skill}_{n}": f"{name}, {n} frames to order." for skill, name in (
        ("CPR", "Cardiopulmonary resuscitation (CPR)"), ("AED", "Automated external defibrillator use (AED)"),
        ("BMV", "Bag-mask ventilation (BMV)")) for n in (4, 6)},
}
