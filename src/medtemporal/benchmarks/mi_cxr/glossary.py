"""MI-CXR's tasks and subtypes as the paper names them (its §3 and Table 9), for the report's glossary."""

GLOSSARY = {
    "TEL": "Temporal Event Localization: at which visit (or interval) a finding emerged or resolved over five visits.",
    "ICR": "Interval-wise Change Reasoning: which interval between consecutive visits shows the change described.",
    "GTS": "Global Trajectory Summarization: the summary of a finding's course over all five visits.",
    "ICR-V": "ICR Variant (the paper's Table 2): the change between one named pair of visits.",
    "single_emergence": "Single emergence (TEL, Single E/R): one finding appears once.",
    "single_resolution": "Single resolution (TEL, Single E/R): one finding resolves once.",
    "multiple_emergence_1": "Multiple emergence, type 1 (TEL, Multiple E/R).",
    "multiple_emergence_2": "Multiple emergence, type 2 (TEL, Multiple E/R).",
    "multiple_resolution_1": "Multiple resolution, type 1 (TEL, Multiple E/R).",
    "multiple_resolution_2": "Multiple resolution, type 2 (TEL, Multiple E/R).",
    "emergence_to_resolution": "Emergence-to-resolution (TEL, E→R): a finding appears, then resolves.",
    "resolution_to_emergence": "Resolution-to-emergence (TEL, R→E): a finding resolves, then appears again.",
    "icr_multi_abn": "ICR question over several abnormalities.",
    "icr_variant": "ICR Variant question: one predefined pair of visits.",
    "single_entity_interval_summary": "Single-entity interval summary (GTS, Single Abnormality).",
    "multi_entity_interval_summary": "Multi-entity interval summary (GTS, Multi Abnormality).",
}
