"""Readers of raw datasets in their real on-disk layouts, producing `medtemporal.schema.Timeline` s.

Each module reads one dataset as its release ships it and never invents
fields the release lacks; every record it leaves out is counted under a named
reason so builders and manifests can report it.

* `mimic_cxr`: MIMIC-CXR-JPG (metadata CSV, JPEGs), MIMIC-CXR reports and
  MIMIC-Ext-CXR-QBA (scene graphs, study metadata): ``read_timelines``.
* `mimic_qba`: what MIMIC-Ext-CXR-QBA defines (study metadata, quality grades, entity names,
  observations merged into findings), used by `mimic_cxr`.
* `chexpert_plus`: CheXpert Plus (report CSV, PNGs).
* `skill_frames`: ClinicalSkillQA key-frame sets (a folder of frames per instance + ``gold.jsonl``).
* `ct_rate`: CT-RATE (NIfTI volumes, labels, reports, metadata CSVs): ``load_timelines``, ``load_volume``.

The phantom writers in `medtemporal.phantoms` write the same layouts, so
every reader also serves the synthetic data used by tests and the demo.
"""
