"""Readers of raw datasets in their real on-disk layouts, producing `medtemporal.schema.Timeline` s.

Each module reads one dataset as its release ships it and never invents
fields the release lacks; every record it leaves out is counted under a named
reason so builders and manifests can report it.

* `mimic_cxr`: MIMIC-CXR-JPG (metadata CSV, JPEGs), MIMIC-CXR reports and
  MIMIC-Ext-CXR-QBA (scene graphs, study metadata): ``read_timelines``.
* `chexpert_plus`: CheXpert Plus (report CSV, PNGs).
* `skill_frames`: ClinicalSkillQA key-frame sets (a folder of frames per instance + ``gold.jsonl``).

The phantom writers in `medtemporal.phantoms` write the same layouts, so
every reader also serves the synthetic data used by tests and the demo.
"""
