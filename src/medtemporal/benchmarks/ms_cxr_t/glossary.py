"""MS-CXR-T's tasks and subtypes as the release names them, for the report's glossary."""

GLOSSARY = {
    "progression": "Temporal image classification: is a finding improving, stable or worsening between the prior "
                   "and the current image.",
    "sentence_similarity": "Temporal sentence similarity: do two sentences describe the same change (paraphrase) "
                           "or opposite ones (contradiction); for text models.",
    "consolidation": "Progression of consolidation.", "edema": "Progression of edema.",
    "pleural_effusion": "Progression of pleural effusion.", "pneumonia": "Progression of pneumonia.",
    "pneumothorax": "Progression of pneumothorax.",
    "RadGraph": "Sentence pairs of the RadGraph subset.", "synthetic": "Sentence pairs of the synthetic subset.",
}
