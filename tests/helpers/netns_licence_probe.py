"""The four routes by which a licence label was wrong (issue 24, point 1), run inside a loopback-only namespace.

Issue 32, point 1 adds two routes without an image root (MMXU imported without ``--mimic-cxr-jpg``, 3D-RAD
without ``--ct-rate``): the images are read from the benchmark folder, whose ``files/`` or ``dataset/`` is a
symlink to unverifiable copies of the phantom images (the control: to the verified phantom itself).

Run as ``python netns_licence_probe.py REMOTE OUT`` in a namespace whose ``lo`` also carries the non-local
address REMOTE; a sink on REMOTE counts every byte that reaches it. Each route builds a benchmark with the
real CLI from phantom data plus one input that is not a verified phantom (a question file of unknown
provenance, a folder of volumes without a phantom manifest, a run's ``--image-root``) and runs it against a
model on REMOTE: the run must be refused before any connection. Each has a control that differs only in
that input (the question file listed as a reviewed open release, the verified phantom as image root),
which must leak: proof that the route really reaches the network when the licence allows it. Prints one
JSON object: per scenario the licence built, the refusal or the run's exit status, and the bytes leaked.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402
from helpers.netns_probe import Sink  # noqa: E402
from helpers.tiny import make_tiny_benchmark  # noqa: E402

from medtemporal.benchmark import load  # noqa: E402
from medtemporal.benchmarks.eltlm.studies import read_studies  # noqa: E402
from medtemporal.benchmarks.rad3d.labels import EXISTENCE_ORDER  # noqa: E402
from medtemporal.benchmarks.rad3d.release import HEADER, LETTERS_BH, OPEN_SUBTASKS, TASKS, write_official  # noqa: E402
from medtemporal.checksums import sha256_file  # noqa: E402
from medtemporal.cli import main  # noqa: E402
from medtemporal.phantoms.chexpert_plus import write_chexpert_plus  # noqa: E402
from medtemporal.phantoms.ct_rate import write_ct_rate  # noqa: E402
from medtemporal.phantoms.cxr import write_cxr_phantoms  # noqa: E402
from medtemporal.provenance import Release, write_phantom_manifest  # noqa: E402

PORT = 18600


def cli(*argv: str) -> tuple[int, str]:
    """``medtemporal ARGV`` in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def listed(module: str, files: list[Path]) -> contextlib.AbstractContextManager[None]:
    """The family's release table (as its build command sees it) listing ``files`` as reviewed open releases."""

    @contextlib.contextmanager
    def patch():
        mod = sys.modules[module]
        before = mod.RELEASES
        mod.RELEASES = tuple(Release(p.name, sha256_file(p), "open", "netns control") for p in files)
        try:
            yield
        finally:
            mod.RELEASES = before

    return patch()


def micxr_question_file(cxr: Path, work: Path) -> Path:
    """A question file in the MI-CXR release layout over the phantom's studies (an export of a phantom build)."""
    code, err = cli("build", "mi-cxr", "--mimic-cxr-jpg", cxr / "mimic-cxr-jpg", "--qba", cxr / "mimic-ext-cxr-qba",
                    "--max-items", "20", "--out", work / "micxr-built")
    assert code == 0, err
    out = work / "micxr_test.jsonl"
    code, err = cli("export", work / "micxr-built", "--format", "micxr", "--out", out)
    assert code == 0, err
    return out


def eltlm_question_file(cxr: Path, work: Path) -> Path:
    """A ``test.json`` in the ELTLM release layout over two studies of each phantom patient."""
    by_subject: dict[str, list[str]] = {}
    for info in read_studies(cxr / "mimic-cxr-jpg").values():
        if info.frontal is not None:
            by_subject.setdefault(info.subject, []).append(info.study)
    records = [{"Source file": subject, "type": "g", "Picture number": ",".join(sorted(studies)[:2]),
                "Question": "What changed between the two examinations?", "Standard Answer": "No change."}
               for subject, studies in sorted(by_subject.items()) if len(studies) >= 2][:3]
    path = work / "test.json"
    path.write_text(json.dumps(records))
    return path


def temmed_release(cxp: Path, work: Path) -> Path:
    """The released TemMed-Bench JSON files over pairs of consecutive frontal phantom studies."""
    df = pd.read_csv(cxp / "df_chexpert_plus_240401.csv", dtype=str, keep_default_na=False)
    frontal = df[df["frontal_lateral"] == "Frontal"].sort_values(["deid_patient_id", "patient_report_date_order"])
    pairs = [(g.iloc[0]["path_to_image"], g.iloc[1]["path_to_image"]) for _, g in frontal.groupby("deid_patient_id")
             if len(g) >= 2][:4]
    test = [{"image_path": now, "historical_image_path": before, "reference_images": [pairs[-1][1]],
             "hist_reference_images": [pairs[-1][0]],
             "VQA_Final": [{"VQA_question": f"Has the effusion of case {k} improved?", "VQA_answer": "Yes."}],
             "condition_changes_report": "Stable.", "reference_condition_changes_reports": ["Stable."]}
            for k, (before, now) in enumerate(pairs[:3])]
    corpus = [{"image_path": pairs[-1][1], "historical_image_path": pairs[-1][0],
               "condition_changes_report": "Stable."}]
    folder = work / "temmed-release"
    folder.mkdir()
    (folder / "TestSet_VQA_ReportGeneration_Final.json").write_text(json.dumps(test))
    (folder / "TrainSet_KnowledgeCorpus_Final.json").write_text(json.dumps(corpus))
    pair = {"right_option": "B", "condition_change": "stable effusion", "option": {"A": 2, "B": 0, "C": 1},
            "Retrieval_TrainSet_now_idx": 0}
    (folder / "TestSet_ImagePairSelection.json").write_text(json.dumps([pair]))
    return folder


def rad3d_release(ct: Path, work: Path) -> tuple[Path, Path]:
    """The 41 released 3D-RAD CSVs over the phantom's volumes (those a phantom build has, the rest header only)
    and a ``VolumeName,Path`` map of its volume names."""
    code, err = cli("build", "3d-rad", "--ct-rate", ct, "--tasks", "task4", "--out", work / "rad3d-built")
    assert code == 0, err
    items = load(work / "rad3d-built").items[:6]
    test = work / "rad3d-release" / "3DRAD" / "test"
    write_official(items, test)
    for task, (_, folder, _) in TASKS.items():
        names = OPEN_SUBTASKS.get(task) or (EXISTENCE_ORDER if task == "task4" else LETTERS_BH)
        for name in names:
            path = test / folder / f"{name}.csv"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                pd.DataFrame(columns=list(HEADER)).to_csv(path, index=False)
    volume_map = work / "valid_path.csv"
    paths = {Path(i.images[0].path).name: i.images[0].path for i in items}
    pd.DataFrame([{"VolumeName": k, "Path": v} for k, v in sorted(paths.items())]).to_csv(volume_map, index=False)
    return work / "rad3d-release", volume_map


def mmxu_release(cxr: Path, work: Path) -> Path:
    """An ``MMXU-test.jsonl`` over pairs of frontal phantom images, in a verified phantom folder of its own (so a
    build labels it synthetic)."""
    by_subject: dict[str, list[str]] = {}
    for info in sorted(read_studies(cxr / "mimic-cxr-jpg").values(), key=lambda i: i.study):
        if info.frontal is not None:
            by_subject.setdefault(info.subject, []).append(info.frontal)
    pairs = [paths[:2] for paths in by_subject.values() if len(paths) >= 2][:3]
    folder = work / "mmxu-release"
    folder.mkdir()
    records = [{"id": k, "content_type": "no change", "question": "How has the effusion changed?",
                "options": {"A": "improved", "B": "no change", "C": "worsened", "D": "resolved"}, "answer": "B",
                "cur_image_path": cur, "prior_image_path": prior} for k, (prior, cur) in enumerate(pairs)]
    (folder / "MMXU-test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    write_phantom_manifest(folder, "netns probe")
    return folder / "MMXU-test.jsonl"


def without_manifest(root: Path, out: Path) -> Path:
    """A copy of a phantom folder without its checksum manifest: the same bytes, but nothing verifies them."""
    shutil.copytree(root, out)
    (out / "phantom_manifest.json").unlink(missing_ok=True)
    return out


def main_() -> None:
    remote, work = sys.argv[1], Path(sys.argv[2])
    os.environ["OPENAI_API_KEY"] = "sk-netns-licence"
    model = f"openai+http://{remote}:{PORT}/v1:fake-vlm"
    sink = Sink(remote, PORT)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    cxr = write_cxr_phantoms(work / "cxr", patients=6, seed=1, image_size=64).root
    cxp = work / "cxp"
    write_chexpert_plus(cxp, patients=6, seed=1)
    ct = work / "ct"
    write_ct_rate(ct, patients=3, seed=1, shape=(16, 16, 8))
    results: dict[str, dict] = {}

    def scenario(name: str, build: list, run: list = (), after_build=None) -> None:
        out = work / name
        code, err = cli("build", *build, "--out", out)
        assert code == 0, (name, err)
        if after_build is not None:
            after_build(out)
        before = sink.received
        manifest = json.loads((out / "manifest.json").read_text())
        code, err = cli("run", out, "--model", model, "--out", work / f"{name}-run", "--no-progress", "--no-cache",
                        "--limit", "2", "--attempts", "1", "--timeout", "3", "--no-score", *run)
        refused = next((line for line in err.splitlines() if "Refusing to send" in line), None)
        results[name] = {"licence": manifest["licence"], "code": code, "refused": refused,
                         "leaked_bytes": sink.received - before}

    jpg = cxr / "mimic-cxr-jpg"
    micxr = micxr_question_file(cxr, work)
    scenario("micxr_official", ["mi-cxr", "--official", micxr, "--mimic-cxr-jpg", jpg])
    with listed("medtemporal.benchmarks.mi_cxr.command", [micxr]):
        scenario("micxr_official_control", ["mi-cxr", "--official", micxr, "--mimic-cxr-jpg", jpg])

    eltlm = eltlm_question_file(cxr, work)
    scenario("eltlm_official", ["eltlm", "--official", eltlm, "--mimic-cxr-jpg", jpg])
    with listed("medtemporal.benchmarks.eltlm.command", [eltlm]):
        scenario("eltlm_official_control", ["eltlm", "--official", eltlm, "--mimic-cxr-jpg", jpg])

    temmed = temmed_release(cxp, work)
    build = ["temmed", "--official", temmed, "--chexpert-plus", cxp, "--tasks", "vqa"]
    scenario("temmed_official", build)
    with listed("medtemporal.benchmarks.temmed.command", sorted(temmed.glob("*.json"))):
        scenario("temmed_official_control", build)

    release, volume_map = rad3d_release(ct, work)
    csvs = sorted(release.rglob("*.csv"))
    copy = without_manifest(ct, work / "ct-copy")
    with listed("medtemporal.benchmarks.rad3d.command", csvs):  # a known release: only the volumes decide
        scenario("rad3d_image_root", ["3d-rad", "--official", release, "--ct-rate", ct, "--volume-map", volume_map,
                                      "--image-root", copy, "--tasks", "task4"])
        scenario("rad3d_image_root_control", ["3d-rad", "--official", release, "--ct-rate", ct, "--volume-map",
                                              volume_map, "--image-root", ct, "--tasks", "task4"])

    # no image root (issue 32, point 1): the images are read from the benchmark folder, where a symlink may lead
    # anywhere; only images that resolve into a verified phantom may leave
    mmxu = mmxu_release(cxr, work)
    plain = without_manifest(jpg / "files", work / "mmxu-plain-files")  # the same bytes, unverifiable
    for name, files in (("mmxu_no_root", plain), ("mmxu_no_root_control", jpg / "files")):
        def link(out: Path, files: Path = files) -> None:
            (out / "files").symlink_to(files, target_is_directory=True)
        scenario(name, ["mmxu", "--official", mmxu, "--no-verify-images", "--no-audit"], after_build=link)
    ct_plain = without_manifest(ct, work / "ct-plain")
    with listed("medtemporal.benchmarks.rad3d.command", csvs):  # a known (open) release, no --ct-rate
        for name, data in (("rad3d_no_root", ct_plain / "dataset"), ("rad3d_no_root_control", ct / "dataset")):
            def link(out: Path, data: Path = data) -> None:
                (out / "dataset").symlink_to(data, target_is_directory=True)
            scenario(name, ["3d-rad", "--official", release, "--tasks", "task4"], after_build=link)

    tiny = make_tiny_benchmark(work / "tiny", n=2)
    other = without_manifest(work / "tiny" / "data", work / "tiny-copy")
    for name, root in (("run_image_root", other), ("run_image_root_control", work / "tiny" / "data")):
        before = sink.received
        code, err = cli("run", tiny, "--model", model, "--out", work / f"{name}-run", "--no-progress", "--no-cache",
                        "--attempts", "1", "--timeout", "3", "--no-score", "--image-root", root)
        refused = next((line for line in err.splitlines() if "Refusing to send" in line), None)
        results[name] = {"licence": "synthetic", "code": code, "refused": refused,
                         "leaked_bytes": sink.received - before}
    print(json.dumps(results))


if __name__ == "__main__":
    main_()
