"""MMXU's task and subtypes as the release names them, for the report's glossary."""

GLOSSARY = {
    "change": "How a region changed between the prior and the current study (four options).",
    "no change": "Items whose answer is no change (the release's content type).",
    "worsen": "Items whose answer is a worsening (the release's content type).",
    "improved": "Items whose answer is an improvement (the release's content type).",
}
