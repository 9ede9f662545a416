"""3D-RAD's tasks and subtasks as the paper and its release name them, for the report's glossary."""

from medtemporal.benchmarks.rad3d.labels import EXISTENCE_ORDER, LETTERS_BH, TASKS

_ORDINAL = {"b": "2nd", "c": "3rd", "d": "4th", "e": "5th", "f": "6th", "g": "7th", "h": "8th"}

GLOSSARY = {
    **{task: f"Task {number}: {name} (the release's {folder})" for task, (number, folder, name) in TASKS.items()},
    **{f"{task}_{letter}": f"{TASKS[task][2]}, subtask {k}: the patient's {_ORDINAL[letter]} scan (letter {letter}), "
                           f"{k} earlier scan{'s' if k > 1 else ''} behind it"
       for task in ("task5", "task6") for k, letter in enumerate(LETTERS_BH, start=1)},
    **{label: f"Existence Detection: is {label.lower()} present (its CT-RATE label)" for label in EXISTENCE_ORDER},
    "Anatomical_observation": "Image Observation: anatomical structures seen on the scan.",
    "Pathological_observation": "Image Observation: pathological findings seen on the scan.",
    "Abnormality_feature": "Anomaly Detection: the features of an abnormality.",
    "Abnormality_position": "Anomaly Detection: where an abnormality is.",
    "Abnormality_type": "Anomaly Detection: what kind of abnormality it is.",
    "Diagnosis": "Anomaly Detection: the diagnosis.",
    "Diameter": "Medical Computation: a diameter.",
    "Size": "Medical Computation: a size.",
    "Thickness": "Medical Computation: a thickness.",
}
