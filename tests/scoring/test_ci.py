import math

import numpy as np
import pytest

from medtemporal.errors import UndefinedMetricWarning
from medtemporal.scoring import cluster_bootstrap
from medtemporal.scoring.ci import cluster_sums


def test_interval_covers_a_known_rate_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    p, n, trials = 0.3, 200, 200
    covered = 0
    for t in range(trials):
        values = (rng.random(n) < p).astype(float)
        est = cluster_bootstrap(values, [str(i) for i in range(n)], resamples=1000, rng=t)
        covered += est.low <= p <= est.high
    assert 0.90 <= covered / trials <= 0.99


def test_interval_contains_the_truth_and_shrinks_with_more_items():
    rng = np.random.default_rng(1)
    small = cluster_bootstrap((rng.random(100) < 0.6).astype(float), [str(i) for i in range(100)], rng=0)
    large = cluster_bootstrap((rng.random(4000) < 0.6).astype(float), [str(i) for i in range(4000)], rng=0)
    assert large.low <= 0.6 <= large.high
    assert (large.high - large.low) < (small.high - small.low) / 4


def test_perfectly_correlated_patients_widen_the_interval():
    rng = np.random.default_rng(3)
    per_patient = 5
    patient_right = rng.random(80) < 0.5
    values = np.repeat(patient_right, per_patient).astype(float)  # all items of a patient agree
    patients = [f"p{k // per_patient}" for k in range(len(values))]
    clustered = cluster_bootstrap(values, patients, rng=0)
    independent = cluster_bootstrap(values, [str(k) for k in range(len(values))], rng=0)
    assert clustered.value == independent.value
    width = clustered.high - clustered.low
    assert width > 1.8 * (independent.high - independent.low)  # about sqrt(5) = 2.2 times
    assert clustered.clusters == 80 and independent.clusters == 400


def test_same_seed_same_interval():
    values = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    clusters = list("aabbcdd")
    assert cluster_bootstrap(values, clusters, rng=5) == cluster_bootstrap(values, clusters, rng=5)


def test_empty_group_warns_and_is_nan():
    with pytest.warns(UndefinedMetricWarning, match="No items"):
        est = cluster_bootstrap(np.array([]), [])
    assert math.isnan(est.value) and est.low is None and est.high is None


def test_single_patient_has_a_value_but_no_interval():
    with pytest.warns(UndefinedMetricWarning, match="the group covers a single patient"):
        est = cluster_bootstrap(np.array([1.0, 0.0, 1.0, 1.0]), ["p"] * 4)
    assert est.value == 0.75 and est.low is None


def test_sufficient_statistics_aggregate_by_their_sums():
    # micro precision tp / (tp + fp) from per-sample (tp, fp) rows, clustered
    stats = np.array([[1, 0], [1, 1], [0, 1], [1, 0], [1, 0], [0, 1]], dtype=float)
    est = cluster_bootstrap(stats, list("aabbcc"), lambda s, c: s[..., 0] / (s[..., 0] + s[..., 1]), rng=0)
    assert est.value == pytest.approx(4 / 7)
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0


def test_cluster_sums():
    sums, counts = cluster_sums(np.array([1.0, 2.0, 3.0]), ["b", "a", "b"])
    assert sums[:, 0].tolist() == [2.0, 4.0] and counts.tolist() == [1.0, 2.0]
