"""Synthetic raw datasets ("phantoms") in the real on-disk schemas, with exact ground truth.

A phantom cohort is what a user of the real dataset has on disk (same
folders, file names, columns and JSON layout), filled with seeded synthetic
patients whose images visibly show a known disease trajectory, plus one extra
file the real datasets lack, ``phantom_truth.jsonl``, and last the checksum
manifest ``phantom_manifest.json`` that marks the folder synthetic. The readers in
`medtemporal.sources` read phantoms and real data alike; tests and the demo
use phantoms because the real data is credentialed. Builders and readers
never import this package: the manifest is checked by `medtemporal.provenance`.

Modules:

* `trajectory`: per-patient truth: `simulate_patient(rng, n_visits) -> PatientTruth`,
  the 12 MI-CXR abnormalities (`ENTITIES`), `EntityState`, `change_of`, `sample_gaps`.
* `render`: `render_cxr(states, view, size, rng, anatomy=..., devices=...) -> PIL.Image`,
  a synthetic radiograph showing a visit's states; `region_boxes`.
* `cxr_text`: report wording (`describe`, `phrase`, `severity_word`, `report`).
* `cxr`: `write_cxr_phantoms(out, patients=..., seed=...)`, MIMIC-CXR-JPG +
  reports + MIMIC-Ext-CXR-QBA (``medtemporal phantoms cxr``).
* `chexpert_plus`: CheXpert Plus phantoms (``medtemporal phantoms chexpert-plus``).
* `skill_frames`: ClinicalSkillQA key-frame sets (``medtemporal phantoms skillqa``).

Every generator ends with `medtemporal.provenance.write_phantom_manifest`.
"""
