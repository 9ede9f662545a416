"""The longitudinal report-generation tasks and subtypes, for the report's glossary."""

GLOSSARY = {
    "findings": "The current study's Findings section, written from its images and the prior study "
                "(the field's headline).",
    "impression": "The current study's Impression section, written the same way.",
    "with_prior": "Studies with an earlier study of the same patient: the latest one is shown as the prior.",
    "no_prior": "Studies with no earlier study of the same patient in the data: nothing to compare with.",
}
