"""The MIMIC-CXR report section parser on the shapes real reports have (written here; no report is committed)."""

from __future__ import annotations

import pytest

from medtemporal.sources.mimic_cxr_reports import canonical_name, parse_sections, read_sections

WET_READ = """ WET READ: ___ ___ ___ 4:22 PM
  Interval worsening of right pleural effusion.
 ______________________________________________________________________________
                                 FINAL REPORT
 EXAMINATION:  CHEST (PA AND LAT)
 
 INDICATION:  ___ year old woman with dyspnea  // eval for effusion
 
 TECHNIQUE:  Chest PA and lateral
 
 COMPARISON:  ___
 
 FINDINGS: 
 
 Moderate right pleural effusion has increased since ___.  No pneumothorax.
 Heart size is normal.
 
 IMPRESSION: 
 
 Increased right pleural effusion.
"""

OLD_STYLE = """                                 FINAL REPORT
 HISTORY:  ___-year-old male with cough.
 
 PA AND LATERAL CHEST RADIOGRAPHS:  The lungs are clear.  The cardiomediastinal
 silhouette is normal.  No pleural effusion or pneumothorax.
 
 IMPRESSION:  No acute cardiopulmonary process.
"""

COMBINED = """                                 FINAL REPORT
 REASON FOR EXAMINATION:  Evaluation of the patient with shortness of breath.
 
 FINDINGS AND IMPRESSION:  Portable AP chest radiograph demonstrates low lung
 volumes.  No focal consolidation.
"""

TITLE_CASE = """                                 FINAL REPORT
 Examination:  Chest radiograph, portable.
 Indication:  Fever.
 Findings:
 Heart: normal size.  Lungs: clear.
 Mediastinum: no widening.
 Impression:
 No acute process.
"""

NOTIFIED = """ FINDINGS:  Right basilar opacity.
 
 IMPRESSION:
 1.  Right basilar opacity, concerning for pneumonia.
 2.  No effusion.
 
 NOTIFICATION:  The findings were discussed with Dr. ___ by Dr. ___ on the
 telephone on ___ at 10:15 AM, 2 minutes after discovery of the findings.
"""


@pytest.mark.parametrize(("report", "expected"), [
    (WET_READ, {"wet read": "___ ___ ___ 4:22 PM Interval worsening of right pleural effusion. " + "_" * 78
                + " FINAL REPORT",
                "examination": "CHEST (PA AND LAT)",
                "indication": "___ year old woman with dyspnea // eval for effusion",
                "technique": "Chest PA and lateral", "comparison": "___",
                "findings": "Moderate right pleural effusion has increased since ___. No pneumothorax. Heart size "
                            "is normal.",
                "impression": "Increased right pleural effusion."}),
    (OLD_STYLE, {"history": "___-year-old male with cough.",
                 "findings": "The lungs are clear. The cardiomediastinal silhouette is normal. No pleural effusion "
                             "or pneumothorax.",
                 "impression": "No acute cardiopulmonary process."}),
    (COMBINED, {"indication": "Evaluation of the patient with shortness of breath.",
                "impression": "Portable AP chest radiograph demonstrates low lung volumes. No focal consolidation."}),
    (TITLE_CASE, {"examination": "Chest radiograph, portable.", "indication": "Fever.",
                  "findings": "Heart: normal size. Lungs: clear. Mediastinum: no widening.",
                  "impression": "No acute process."}),
    (NOTIFIED, {"findings": "Right basilar opacity.",
                "impression": "1. Right basilar opacity, concerning for pneumonia. 2. No effusion.",
                "notification": "The findings were discussed with Dr. ___ by Dr. ___ on the telephone on ___ at "
                                "10:15 AM, 2 minutes after discovery of the findings."}),
], ids=["wet-read-preamble", "views-as-findings-header", "findings-and-impression", "title-case-headers",
        "notification-after-impression"])
def test_real_report_shapes_give_their_sections(report, expected):
    assert parse_sections(report) == expected


def test_a_findings_header_with_no_text_is_no_findings_section():
    text = " FINDINGS:\n \n IMPRESSION:\n \n Lungs are clear.  No effusion.\n"
    assert parse_sections(text) == {"impression": "Lungs are clear. No effusion."}


def test_view_headers_after_findings_join_it_and_a_later_impression_replaces_an_earlier_one():
    text = (" FINDINGS:\n FRONTAL VIEW:  Left lower lobe opacity.\n LATERAL VIEW:  Retrocardiac opacity confirmed.\n"
            " IMPRESSION:  Pneumonia.\n ADDENDUM:  Reviewed.\n IMPRESSION:  Left lower lobe pneumonia.\n")
    sections = parse_sections(text)
    assert sections["findings"] == "Left lower lobe opacity. Retrocardiac opacity confirmed."
    assert sections["impression"] == "Left lower lobe pneumonia." and sections["addendum"] == "Reviewed."


def test_typos_conclusions_and_crlf_line_ends_are_read_as_the_creators_parser_names_them():
    text = "FINIDNGS:  Mild cardiomegaly.\r\nCONCLUSION:  Cardiomegaly.\r\nREASON FOR CHEST X-RAY:  dyspnea\r\n"
    assert parse_sections(text) == {"findings": "Mild cardiomegaly.", "impression": "Cardiomegaly.",
                                    "indication": "dyspnea"}


def test_a_report_without_headers_has_no_sections_and_a_missing_file_reads_empty(tmp_path):
    assert parse_sections("The lungs are clear.\n\nNo acute process.\n") == {}
    assert read_sections(tmp_path / "s1.txt") == {}
    (tmp_path / "s2.txt").write_text(OLD_STYLE, encoding="utf-8")
    assert read_sections(tmp_path / "s2.txt")["findings"].startswith("The lungs are clear.")


@pytest.mark.parametrize(("header", "name"), [
    ("FINDINGS", "findings"), ("Findings", "findings"), ("IMPRESSION", "impression"), ("Conclusion", "impression"),
    ("FINDINGS/IMPRESSION", "impression"), ("CHEST, TWO VIEWS", "findings"),
    ("PORTABLE AP CHEST RADIOGRAPH", "findings"),
    ("CLINICAL HISTORY", "history"), ("REASON FOR EXAM", "indication"), ("WETREAD", "wet read"),
    ("COMPARISONS", "comparison"), ("RECOMMENDATION(S)", "recommendations"), ("Heart", None), ("Lungs", None),
])
def test_header_names_normalise_as_the_creators_table_and_rules_say(header, name):
    assert canonical_name(header) == name
