"""TemMed-Bench's tasks and subtypes as the paper names them, for the report's glossary."""

GLOSSARY = {
    "vqa": "VQA: a yes/no question on how a condition changed between the historical and the current image.",
    "report": "Report generation: the report of the change between the two images.",
    "image_pair": "Image-pair selection: which of three image pairs shows the change described.",
    "vqa_improved": "VQA question whose change is an improvement.",
    "vqa_worsened": "VQA question whose change is a worsening.",
    "vqa_unchanged": "VQA question whose condition is unchanged.",
    "pair_improved": "Image-pair selection where the described change is an improvement.",
    "pair_worsened": "Image-pair selection where the described change is a worsening.",
    "pair_unchanged": "Image-pair selection where the condition is unchanged.",
}
