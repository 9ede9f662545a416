"""The judge's strict parser on realistic outputs: what it reads, and what goes to the unparseable bucket."""

import pytest

from medtemporal.benchmarks.eltlm.rubric import parse_verdict

READ = [
    ("Accuracy: 1\nCompleteness: 1", (1, 1)),
    ("Accuracy: 0\nCompleteness: 0", (0, 0)),
    ("Accuracy: 1\nCompleteness: 0", (1, 0)),
    ("Completeness: 0\nAccuracy: 1", (1, 0)),  # swapped order
    ("accuracy: 1\ncompleteness: 1", (1, 1)),
    ("ACCURACY: 0\nCOMPLETENESS: 1", (0, 1)),
    ("Accuracy:1\nCompleteness:0", (1, 0)),
    ("Accuracy : 1\nCompleteness : 1", (1, 1)),
    ("**Accuracy:** 1\n**Completeness:** 0", (1, 0)),
    ("**Accuracy**: 1\n**Completeness**: 1", (1, 1)),
    ("- Accuracy: 1\n- Completeness: 0", (1, 0)),
    ("1. Accuracy: 0\n2. Completeness: 1", (0, 1)),
    ("Accuracy (0/1): 1\nCompleteness (0/1): 1", (1, 1)),
    ("Accuracy: 1/1\nCompleteness: 0/1", (1, 0)),
    ("Accuracy: 1 / 1\nCompleteness: 1 / 1", (1, 1)),
    ("Here is my evaluation.\n\nAccuracy: 1\nCompleteness: 0\n\nThe answer misses the effusion.", (1, 0)),
    ("The model answer agrees with the reference.\nAccuracy: 1\nCompleteness: 1", (1, 1)),
    ("Accuracy: 1 - the key change is right\nCompleteness: 0 - misses the second interval", (1, 0)),
    ("Accuracy: 0.\nCompleteness: 0.", (0, 0)),
    ("```\nAccuracy: 1\nCompleteness: 1\n```", (1, 1)),
    ("### Accuracy: 1\n### Completeness: 1", (1, 1)),
    ("  Accuracy: 1  \n\tCompleteness: 0", (1, 0)),
    ("Accuracy: 1\r\nCompleteness: 1\r\n", (1, 1)),
    ("Accuracy: 1\nCompleteness: 1\nAccuracy: 1", (1, 1)),  # repeated, same score
    ("Accuracy= 0\nCompleteness= 1", (0, 1)),
]

UNPARSEABLE = [
    "Accuracy: 1",  # missing line
    "Completeness: 0",
    "",
    None,
    "The answer is accurate and complete.",
    "Accuracy: 1, Completeness: 1",  # both on one line
    "Accuracy: 2\nCompleteness: 1",  # not binary
    "Accuracy: 0.5\nCompleteness: 1",
    "Accuracy: yes\nCompleteness: yes",
    "Accuracy: 1\nCompleteness: 0\nAccuracy: 0",  # contradicting scores
    "Accuracy:\n1\nCompleteness:\n0",  # score not on the label's line
    "Accuracy: 10\nCompleteness: 1",
    "Accuracy: high\nCompleteness: 1",
    "A",  # what a letter-answering server returns
    "{\"accuracy\": 1, \"completeness\": 1}",
    "Score: 1\nScore: 0",
]


@pytest.mark.parametrize(("text", "expected"), READ)
def test_reads_two_labelled_binary_lines(text, expected):
    assert parse_verdict(text) == expected


@pytest.mark.parametrize("text", UNPARSEABLE)
def test_anything_else_is_unparseable_not_zero(text):
    assert parse_verdict(text) is None


def test_at_least_thirty_realistic_outputs_are_covered():
    assert len(READ) + len(UNPARSEABLE) >= 30
