"""No traceback, ever (issue 15, points 9-12): each bad input gets one sentence on stderr and exit status 2."""

import json
import sqlite3

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import ITEMS, MANIFEST
from medtemporal.cli import main
from medtemporal.backends.cache import ResponseCache
from medtemporal.runner import run


def _one_error(capsys, *needles):
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("medtemporal: error:") and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def bench(tmp_path):
    return make_tiny_benchmark(tmp_path, n=3)


def _run(bench, out, *extra, model="baseline:random"):
    return main(["run", str(bench), "--model", model, "--out", str(out), "--no-progress", *extra])


# --- point 9: a corrupt cache ---------------------------------------------------------------------------------------

def test_a_cache_of_random_bytes_names_the_file_and_the_way_out(fake, bench, tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    cache.write_bytes(bytes(range(256)) * 8)
    assert _run(bench, tmp_path / "run", "--cache", str(cache), model=fake.uri()) == 2
    _one_error(capsys, str(cache), "--no-cache", "delete it")
    assert _run(bench, tmp_path / "run", "--no-cache", model=fake.uri()) == 0


def test_a_truncated_cache_is_one_sentence(fake, bench, tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    with ResponseCache(cache) as c:
        for k in range(300):
            c._db.execute("INSERT INTO responses VALUES (?, ?, 0)", (f"k{k}", json.dumps({"text": "x" * 500})))
    data = cache.read_bytes()
    cache.write_bytes(data[: len(data) // 3])
    assert _run(bench, tmp_path / "run", "--cache", str(cache), model=fake.uri()) == 2
    _one_error(capsys, str(cache), "--no-cache")


def test_a_bad_cache_row_is_a_miss_and_is_replaced(fake, bench, tmp_path):
    cache = tmp_path / "c.sqlite"
    first = run(bench, fake.uri(), tmp_path / "a", cache_path=cache, progress=False)
    assert first.requests == 3
    db = sqlite3.connect(cache)
    rows = [r[0] for r in db.execute("SELECT key FROM responses")]
    for key, bad in zip(rows, ['{"text": ', '[1, 2]', '{"no_such_field": 1}']):
        db.execute("UPDATE responses SET response = ? WHERE key = ?", (bad, key))
    db.commit()
    db.close()
    second = run(bench, fake.uri(), tmp_path / "b", cache_path=cache, progress=False)
    assert (second.done, second.requests, second.cache_hits) == (3, 3, 0)
    third = run(bench, fake.uri(), tmp_path / "c", cache_path=cache, progress=False)
    assert (third.requests, third.cache_hits) == (0, 3)


# --- point 10: bytes that are not UTF-8 -------------------------------------------------------------------------------

BAD = b"\xff\xfe\x80 not utf-8 \xc3\x28\n"


@pytest.mark.parametrize("target", ["items", "manifest", "prompt", "predictions", "config", "scores"])
def test_non_utf8_in_any_file_the_cli_reads_is_one_sentence_naming_it(bench, tmp_path, capsys, target):
    out = tmp_path / "run"
    assert _run(bench, out) == 0
    capsys.readouterr()
    path = {"items": bench / ITEMS, "manifest": bench / MANIFEST, "prompt": tmp_path / "p.txt",
            "predictions": out / "predictions.jsonl", "config": out / "config.json", "scores": out / "scores.json"}[target]
    path.write_bytes(BAD)
    if target == "prompt":
        assert _run(bench, tmp_path / "r2", "--prompt", f"mcq_direct={path}") == 2
    elif target == "scores":
        assert main(["report", str(out)]) == 2
    elif target == "config":
        assert main(["score", str(out)]) == 2
    else:
        assert _run(bench, out) == 2
    _one_error(capsys, str(path))


def test_runs_list_marks_a_bad_folder_and_lists_the_rest(bench, tmp_path, capsys):
    for name in ("good", "bad", "worse"):
        assert _run(bench, tmp_path / "runs" / name) == 0
    (tmp_path / "runs" / "bad" / "predictions.jsonl").write_bytes(BAD * 3)
    (tmp_path / "runs" / "bad" / "config.json").write_bytes(BAD)
    (tmp_path / "runs" / "worse" / "config.json").write_text('{"model": "not a mapping", "benchmark": 7}')
    capsys.readouterr()
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    rows = {line.split(" | ")[0].strip("| ").rsplit("/", 1)[-1]: line for line in out.splitlines()[2:]}
    assert set(rows) == {"good", "bad", "worse"}
    assert "finished" in rows["good"] and "3/3" in rows["good"]
    assert "unreadable" in rows["bad"] and "unreadable" in rows["worse"]


# --- points 11 and 12: options checked at the boundary -------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["--temperature", "nan"], "--temperature"),
    (["--temperature", "-1"], "--temperature"),
    (["--temperature", "inf"], "--temperature"),
    (["--timeout", "nan"], "--timeout"),
    (["--timeout", "0"], "--timeout"),
    (["--max-tokens", "-5"], "--max-tokens"),
    (["--top-p", "1.5"], "--top-p"),
    (["--top-p", "nan"], "--top-p"),
    (["--concurrency", "0"], "--concurrency"),
    (["--concurrency", "5000"], "--concurrency must be a whole number from 1 to 1024"),
    (["--attempts", "0"], "--attempts"),
    (["--limit", "-1"], "--limit"),
    (["--max-errors", "-1"], "--max-errors"),
    (["--max-pixels", "-1"], "--max-pixels"),
])
def test_numeric_options_are_checked_before_anything_runs(bench, tmp_path, capsys, args, needle):
    assert _run(bench, tmp_path / "run", *args) == 2
    _one_error(capsys, needle)
    assert not (tmp_path / "run" / "predictions.jsonl").exists()


@pytest.mark.parametrize("args, needle", [(["--confidence", "nan"], "--confidence"),
                                          (["--confidence", "1"], "--confidence"),
                                          (["--resamples", "0"], "--resamples")])
def test_score_options_are_checked(bench, tmp_path, capsys, args, needle):
    assert _run(bench, tmp_path / "run") == 0
    capsys.readouterr()
    assert main(["score", str(tmp_path / "run"), *args]) == 2
    _one_error(capsys, needle)


def test_out_naming_a_file_is_one_sentence(bench, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert _run(bench, tmp_path / "file") == 2
    _one_error(capsys, "is a file")
    assert _run(bench, tmp_path / "run") == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "file")]) == 2
    _one_error(capsys, "is a file")
    assert _run(bench, tmp_path / "file" / "run") == 2  # under a file
    _one_error(capsys, "cannot be created")
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "file" / "r")]) == 2
    _one_error(capsys, "cannot be created")
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("model, needle", [
    ("openai+http://127.0.0.1:99999/v1:m", "port"),
    ("openai+http://127.0.0.1:0/v1:m", "port"),
    ("openai+http://[::1:8000/v1:m", "does not name an endpoint"),
])
def test_bad_endpoints_are_one_sentence(bench, tmp_path, capsys, model, needle):
    assert _run(bench, tmp_path / "run", model=model) == 2
    _one_error(capsys, needle)


@pytest.mark.parametrize("url, needle", [("http://127.0.0.1:8000/v1\t", "'\\t'"),
                                         ("http://127.0.0.1:70000/v1", "port"),
                                         ("ftp://127.0.0.1/v1", "http://"),
                                         ("http:///v1", "no host")])
def test_a_bad_openai_base_url_is_one_sentence(bench, tmp_path, capsys, monkeypatch, url, needle):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert _run(bench, tmp_path / "run", model="openai:gpt-4o") == 2
    _one_error(capsys, "OPENAI_BASE_URL", needle)


def test_a_stray_dollar_in_a_prompt_template_is_one_sentence(bench, tmp_path, capsys):
    prompt = tmp_path / "p.txt"
    prompt.write_text("Question: $question\nOptions:\n$options\nIt costs $ 5.\n")
    assert _run(bench, tmp_path / "run", "--prompt", f"mcq_direct={prompt}") == 2
    _one_error(capsys, str(prompt), "line 4", "$$")
    prompt.write_text("Question: $question\nOptions:\n$options\nIt costs $$5.\n")
    assert _run(bench, tmp_path / "run", "--prompt", f"mcq_direct={prompt}") == 0


# --- issue 24, point 3: more inputs that gave a traceback ------------------------------------------------------------

def _snapshot(root):
    """Bytes of every file under ``root``: what a failed command must leave as it was."""
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} if root.exists() else {}


def _clean(root, before):
    """No ``*.tmp`` left anywhere under ``root`` and every file of ``before`` unchanged."""
    assert not list(root.rglob("*.tmp")), list(root.rglob("*.tmp"))
    assert _snapshot(root) | before == _snapshot(root) and all(p.read_bytes() == b for p, b in before.items())


def _bomb_png(width=30000, height=30000):
    """A 60-byte PNG that declares ``width`` × ``height`` pixels (Pillow's DecompressionBombError is no OSError)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def _bomb_jpeg(width=30000, height=30000):
    """A small JPEG whose frame header declares ``width`` × ``height`` pixels."""
    import io
    import struct

    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (8, 8)).save(buf, "JPEG")
    data = bytearray(buf.getvalue())
    at = data.find(b"\xff\xc0")
    struct.pack_into(">HH", data, at + 5, height, width)
    return bytes(data)


@pytest.fixture(scope="module")
def cxr(tmp_path_factory):
    from helpers.phantoms import make_cxr_phantoms

    return make_cxr_phantoms(tmp_path_factory.mktemp("cxr24"), patients=6, seed=1, image_size=64).root


@pytest.fixture
def cxr_copy(cxr, tmp_path):
    import shutil

    shutil.copytree(cxr, tmp_path / "cxr")
    return tmp_path / "cxr"


def _built_before(family_args, out, capsys):
    """Build once into ``out`` (a benchmark a failed rebuild must not lose) and return its snapshot."""
    assert main(["build", *family_args, "--out", str(out)]) == 0
    capsys.readouterr()
    return _snapshot(out)


@pytest.mark.parametrize("family", ["mi-cxr", "eltlm"])
@pytest.mark.parametrize("keep", [0.9, 0.3])
def test_a_truncated_metadata_gzip_is_one_sentence_and_the_old_build_stays(cxr_copy, cxr, tmp_path, capsys, family,
                                                                           keep):
    args = [family, "--mimic-cxr-jpg", str(cxr_copy / "mimic-cxr-jpg"), "--qba", str(cxr_copy / "mimic-ext-cxr-qba")]
    out = tmp_path / "bench"
    before = _built_before(args, out, capsys)
    gz = cxr_copy / "mimic-cxr-jpg" / "mimic-cxr-2.0.0-metadata.csv.gz"
    data = gz.read_bytes()
    gz.write_bytes(data[: int(len(data) * keep)])  # EOFError inside gzip: not an OSError
    assert main(["build", *args, "--out", str(out), "--overwrite"]) == 2
    _one_error(capsys, "mimic-cxr-2.0.0-metadata.csv.gz", "download", "cut short")
    _clean(out, before)


def test_decompression_bombs_are_corrupt_images_in_the_mi_cxr_build(cxr_copy, tmp_path, capsys):
    jpgs = sorted((cxr_copy / "mimic-cxr-jpg" / "files").rglob("*.jpg"))
    for path in jpgs[::3]:
        path.write_bytes(_bomb_jpeg())
    args = ["mi-cxr", "--mimic-cxr-jpg", str(cxr_copy / "mimic-cxr-jpg"), "--qba", str(cxr_copy / "mimic-ext-cxr-qba")]
    assert main(["build", *args, "--out", str(tmp_path / "b")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    manifest = json.loads((tmp_path / "b" / MANIFEST).read_text())
    assert manifest["exclusions"]["study_image_corrupt"] >= 1


def test_a_decompression_bomb_stops_the_temmed_and_skillqa_builds_in_one_sentence(tmp_path, capsys):
    from medtemporal.phantoms.chexpert_plus import write_chexpert_plus
    from medtemporal.phantoms.skill_frames import write_skill_phantoms

    cxp = tmp_path / "cxp"
    write_chexpert_plus(cxp, patients=12, seed=2, image_size=32)
    for path in (cxp / "PNG").rglob("*.png"):
        path.write_bytes(_bomb_png())
    assert main(["build", "temmed", "--chexpert-plus", str(cxp), "--test-size", "4", "--embedder", "pixel", "--out", str(tmp_path / "t")]) == 2
    _one_error(capsys, "cannot be read", "decompression bomb")
    _clean(tmp_path, {})
    frames = tmp_path / "frames"
    write_skill_phantoms(frames, instances=3, seed=0, image_size=48, progress=False)
    frame = sorted(frames.rglob("A.*"))[0]
    frame.write_bytes(_bomb_png() if frame.suffix == ".png" else _bomb_jpeg())
    assert main(["build", "skillqa", "--frames", str(frames), "--out", str(tmp_path / "s")]) == 2
    _one_error(capsys, str(frame), "replace it")


def test_a_decompression_bomb_fails_its_item_in_a_skillqa_run_never_the_run(fake, tmp_path, capsys):
    from medtemporal.phantoms.skill_frames import write_skill_phantoms

    frames = tmp_path / "frames"
    write_skill_phantoms(frames, instances=4, seed=0, image_size=48, progress=False)
    assert main(["build", "skillqa", "--frames", str(frames), "--out", str(tmp_path / "b")]) == 0
    frame = sorted(frames.rglob("A.*"))[0]
    frame.write_bytes(_bomb_png() if frame.suffix == ".png" else _bomb_jpeg())
    capsys.readouterr()
    assert main(["run", str(tmp_path / "b"), "--model", fake.uri(), "--out", str(tmp_path / "r"), "--no-progress",
                 "--no-score", "--attempts", "1"]) == 1
    err = capsys.readouterr()
    assert "Traceback" not in err.err + err.out
    assert "1 × bad_image" in err.out and "decompression bomb" in err.out
    lines = [json.loads(x) for x in (tmp_path / "r" / "predictions.jsonl").read_text().splitlines()]
    assert sorted(p["error"] is None for p in lines) == [False, True, True, True]


@pytest.mark.parametrize("damage", ["observation_is_a_string", "categories_an_int", "modifiers_a_list",
                                    "change_sentence_an_int", "entities_an_int", "quality_a_list"])
def test_scene_graphs_with_values_of_the_wrong_types_are_unreadable(cxr_copy, tmp_path, capsys, damage):
    graphs = sorted((cxr_copy / "mimic-ext-cxr-qba" / "scene_data").rglob("*.scene_graph.json"))
    damaged = 0
    for path in graphs[::2]:
        graph = json.loads(path.read_text())
        observations = graph["observations"]
        if not observations:
            continue
        key = next(iter(observations))
        obs = observations[key]
        if damage == "observation_is_a_string":
            observations[key] = "effusion"
        elif damage == "categories_an_int":
            obs["obs_categories"] = 5
        elif damage == "modifiers_a_list":
            for o in observations.values():
                o["modifiers"] = ["severe"]
                o["positiveness"] = "pos"
        elif damage == "change_sentence_an_int":
            for o in observations.values():
                o["change_sentence"] = 7
        elif damage == "entities_an_int":
            obs["obs_entities"] = 3
        else:
            obs["obs_quality"] = ["A"]
        path.write_text(json.dumps(graph))
        damaged += 1
    args = ["mi-cxr", "--mimic-cxr-jpg", str(cxr_copy / "mimic-cxr-jpg"), "--qba", str(cxr_copy / "mimic-ext-cxr-qba"),
            "--out", str(tmp_path / "b")]
    code = main(["build", *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err and code in (0, 2), err
    if code == 0:
        exclusions = json.loads((tmp_path / "b" / MANIFEST).read_text())["exclusions"]
        assert 1 <= exclusions["study_scene_graph_unreadable"] <= damaged
    else:
        _one_error_in(err, "No mi-cxr items")


def _one_error_in(err, *needles):
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("medtemporal: error:"), err
    assert all(n in lines[0] for n in needles), lines[0]


def test_a_non_utf8_lmms_eval_log_is_one_sentence(bench, tmp_path, capsys):
    log = tmp_path / "samples.jsonl"
    log.write_bytes(BAD)
    assert main(["import-predictions", str(bench), str(log), "--from", "lmms-eval", "--out", str(tmp_path / "r")]) == 2
    _one_error(capsys, str(log), "UTF-8")
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("*.tmp"))


@pytest.mark.parametrize("host", ["0177.0.0.1", "ｐｕｂｌｉｃ.test", "ⓛocalhost"])
@pytest.mark.parametrize("where", ["uri", "env"])
def test_hosts_the_http_client_cannot_build_are_one_sentence(bench, tmp_path, capsys, monkeypatch, host, where):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    if where == "env":
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://{host}:8000/v1")
        model = "openai:m"
    else:
        model = f"openai+http://{host}:8000/v1:m"
    assert _run(bench, tmp_path / "run", model=model) == 2
    _one_error(capsys, repr(host))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("cut", ["inside_the_last_row", "inside_a_report", "after_the_header"])
def test_a_truncated_chexpert_plus_csv_stops_the_build(tmp_path, capsys, cut):
    from medtemporal.phantoms.chexpert_plus import write_chexpert_plus

    cxp = tmp_path / "cxp"
    write_chexpert_plus(cxp, patients=8, seed=2, image_size=32)
    csv = cxp / "df_chexpert_plus_240401.csv"
    data = csv.read_bytes()
    end = {"inside_the_last_row": len(data) - 12, "inside_a_report": data.index(b'"', data.index(b"\n") + 1) + 40,
           "after_the_header": data.index(b"\n") + 30}[cut]
    csv.write_bytes(data[:end])
    assert main(["build", "temmed", "--chexpert-plus", str(cxp), "--test-size", "2", "--out", str(tmp_path / "b")]) == 2
    _one_error(capsys, str(csv))
    assert not (tmp_path / "b" / ITEMS).exists()


def test_eltlm_records_without_a_picture_are_excluded_and_counted(tmp_path, capsys):
    records = [{"Source file": "p10000001", "type": "g", "Picture number": pictures, "Question": "What changed?",
                "Standard Answer": "Nothing."} for pictures in ("s50000001,s50000002", "", " , ")]
    path = tmp_path / "test.json"
    path.write_text(json.dumps(records))
    assert main(["build", "eltlm", "--official", str(path), "--no-verify-images", "--out", str(tmp_path / "b")]) == 0
    manifest = json.loads((tmp_path / "b" / MANIFEST).read_text())
    assert manifest["exclusions"] == {"no_study_listed": 2}
    items = [json.loads(x) for x in (tmp_path / "b" / ITEMS).read_text().splitlines()]
    assert len(items) == 1 and len(items[0]["images"]) == 2


@pytest.fixture(scope="module")
def sources(tmp_path_factory, cxr):
    """Phantom inputs of every build (read-only): CT-RATE, CheXpert Plus and skill frames, plus ``cxr``."""
    from medtemporal.phantoms.chexpert_plus import write_chexpert_plus
    from medtemporal.phantoms.ct_rate import write_ct_rate
    from medtemporal.phantoms.skill_frames import write_skill_phantoms

    root = tmp_path_factory.mktemp("sources24")
    write_ct_rate(root / "ct", patients=2, seed=1, shape=(12, 12, 6))
    write_chexpert_plus(root / "cxp", patients=8, seed=2, image_size=32)
    write_skill_phantoms(root / "skill", instances=3, seed=0, image_size=48, progress=False)
    return {"ct": root / "ct", "cxp": root / "cxp", "skill": root / "skill", "cxr": cxr}


NON_UTF8_INPUTS = {  # file under a copied source folder, and the build arguments that read it
    "ct-rate labels": ("ct", "dataset/multi_abnormality_labels/valid_predicted_labels.csv",
                       ["3d-rad", "--ct-rate", "{root}"]),
    "ct-rate reports": ("ct", "dataset/radiology_text_reports/validation_reports.csv",
                        ["3d-rad", "--ct-rate", "{root}"]),
    "chexpert plus csv": ("cxp", "df_chexpert_plus_240401.csv",
                          ["temmed", "--chexpert-plus", "{root}", "--test-size", "2"]),
    "skill gold": ("skill", "gold.jsonl", ["skillqa", "--frames", "{root}"]),
    "qba study metadata": ("cxr", "mimic-ext-cxr-qba/metadata/study_metadata.parquet",
                           ["mi-cxr", "--mimic-cxr-jpg", "{root}/mimic-cxr-jpg", "--qba", "{root}/mimic-ext-cxr-qba"]),
    "mimic metadata": ("cxr", "mimic-cxr-jpg/mimic-cxr-2.0.0-metadata.csv.gz",
                       ["eltlm", "--mimic-cxr-jpg", "{root}/mimic-cxr-jpg", "--qba", "{root}/mimic-ext-cxr-qba"]),
    "eltlm release": ("cxr", "test.json", ["eltlm", "--official", "{root}/test.json", "--no-verify-images"]),
    "micxr release": ("cxr", "micxr_test.jsonl",
                      ["mi-cxr", "--official", "{root}/micxr_test.jsonl", "--mimic-cxr-jpg", "{root}/mimic-cxr-jpg"]),
    "temmed release": ("cxp", "release/TestSet_VQA_ReportGeneration_Final.json",
                       ["temmed", "--official", "{root}/release", "--chexpert-plus", "{root}"]),
    "3d-rad release": ("ct", "release/3DRAD/test/Task4_Existence_Detection/Atelectasis.csv",
                       ["3d-rad", "--official", "{root}/release"]),
    "volume map": ("ct", "map.csv", ["3d-rad", "--official", "{root}/release", "--ct-rate", "{root}",
                                     "--volume-map", "{root}/map.csv"]),
}


def _rad3d_release(test):
    """The 41 released 3D-RAD CSVs under ``test``, each with the header only."""
    from medtemporal.benchmarks.rad3d.labels import EXISTENCE_ORDER
    from medtemporal.benchmarks.rad3d.release import HEADER, LETTERS_BH, OPEN_SUBTASKS, TASKS

    for task, (_, folder, _) in TASKS.items():
        for sub in OPEN_SUBTASKS.get(task) or (EXISTENCE_ORDER if task == "task4" else LETTERS_BH):
            (test / folder).mkdir(parents=True, exist_ok=True)
            (test / folder / f"{sub}.csv").write_text(",".join(HEADER) + "\n")


@pytest.mark.parametrize("name", sorted(NON_UTF8_INPUTS))
def test_non_utf8_in_any_file_a_build_reads_is_one_sentence(sources, tmp_path, capsys, name):
    import shutil

    kind, rel, argv = NON_UTF8_INPUTS[name]
    root = tmp_path / kind
    shutil.copytree(sources[kind], root)
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if "release" in rel and kind == "ct":  # the 41 released CSVs, header only: only the damaged file is bad
        _rad3d_release(root / "release" / "3DRAD" / "test")
    target.write_bytes(BAD * 4)
    out = tmp_path / "b"
    code = main(["build", *[a.format(root=root) for a in argv], "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    _one_error_in(err)
    assert not out.exists() or not list(out.rglob("*.tmp"))
