"""Medical-Diff-VQA's tasks and question types as the release names them, for the report's glossary."""

GLOSSARY = {
    "closed": "Closed questions: answered yes or no.",
    "open": "Open questions other than difference: a short free answer.",
    "difference": "What has changed in the main study compared to the reference study.",
    "abnormality": "Question type abnormality: which abnormalities are seen.",
    "presence": "Question type presence: is a finding present.",
    "view": "Question type view: which view the image is.",
    "location": "Question type location: where a finding is.",
    "level": "Question type level: how severe a finding is.",
    "type": "Question type type: which kind a finding is.",
}
