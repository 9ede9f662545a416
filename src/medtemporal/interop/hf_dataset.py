"""``export --format hf DIR``: a folder ready for ``datasets``' ``push_to_hub`` — the data and a dataset card.

``DIR/data/test-00000-of-00001.parquet`` is the Parquet export with every image and volume embedded
(the Hub has no access to the image root), and ``DIR/README.md`` is the dataset card: YAML front matter
(licence, tags, ``configs`` and ``dataset_info`` with the features and the split size, as the Hub reads
them), then what was built from what, counts by task and subtype, the blind-solvability audit summary,
how to load it, and the paper's citation (registered with the family's spec: ``citation``). Benchmarks
under a ``credentialed`` licence are refused: their data-use agreements forbid redistribution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medtemporal import __version__
from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError
from medtemporal.interop.files import folder_atomically
from medtemporal.interop.views import protocol_name
from medtemporal.interop.parquet import features, has_volumes, metadata, rows, write_table
from medtemporal.registry import lookup

DATA_FILE = "data/test-00000-of-00001.parquet"
LICENCES = {"synthetic": "apache-2.0", "open": "other"}
"""The card's ``license`` per manifest licence: phantom data is medtemporal's own output (Apache-2.0); an
``open`` release keeps its own terms, named in the card."""


def _yaml_value(value: Any, indent: int) -> str:
    """``value`` (from ``Features._to_yaml_list``) as block YAML."""
    import yaml

    text = yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=False)
    pad = " " * indent
    return "".join(pad + line + "\n" for line in text.splitlines())


def _audit_lines(bench: Benchmark) -> list[str]:
    audit = bench.manifest.audit
    if not audit:
        return ["No blind-solvability audit was run for this build (`medtemporal audit BENCH` runs one)."]
    flagged = [s for s in audit.get("subtypes", []) if s.get("flagged")]
    lines = [(f"Blind-solvability audit ({audit.get('method', {}).get('flag', 'see medtemporal audit')}): "
              f"{len(flagged)} of {len(audit.get('subtypes', []))} subtypes can be answered from the text alone "
              "above chance.")]
    if flagged:
        lines += ["", "| task | subtype | n | chance | best blind accuracy (95% CI) |", "|---|---|---|---|---|"]
        for s in flagged:
            best = max((s.get(k) or {} for k in ("heuristic", "classifier")), key=lambda r: r.get("accuracy", 0))
            lines.append(f"| {s['task']} | {s['subtype']} | {s['n']} | {s['chance']:.2f} | "
                         f"{best.get('accuracy', 0):.2f} ({best.get('ci_low', 0):.2f}–{best.get('ci_high', 0):.2f}) |")
    return lines


def card(bench: Benchmark, schema: Any, num_bytes: int) -> str:
    """The dataset card (README.md) of the exported folder."""
    m = bench.manifest
    entry = lookup("benchmark", m.benchmark)
    family = entry.obj
    citation = entry.info.get("citation", "")
    tags = ["medical", "temporal-reasoning", "vision-language", "medtemporal", *(["synthetic"] if m.licence == "synthetic" else [])]
    n = len(bench.items)
    size = "n<1K" if n < 1_000 else "1K<n<10K" if n < 10_000 else "10K<n<100K" if n < 100_000 else "n>100K"
    front = (
        "---\n"
        f"license: {LICENCES[m.licence]}\n"
        f"pretty_name: \"medtemporal {m.benchmark}{' (synthetic phantom data)' if m.licence == 'synthetic' else ''}\"\n"
        "task_categories:\n- visual-question-answering\n"
        f"tags:\n{''.join(f'- {t}' + chr(10) for t in tags)}"
        f"size_categories:\n- {size}\n"
        f"configs:\n- config_name: default\n  data_files:\n  - split: test\n    path: {DATA_FILE}\n"
        "dataset_info:\n  features:\n" + _yaml_value(schema._to_yaml_list(), 2)
        + f"  splits:\n  - name: test\n    num_bytes: {num_bytes}\n    num_examples: {n}\n---\n"
    )
    origin = ("synthetic phantom data written by medtemporal's phantom generator in the real dataset's on-disk "
              "schema (no patient data); the construction rules are the paper's" if m.licence == "synthetic" else
              "a public release whose terms are those of its authors (see the citation)")
    counts = [f"| {task} | {count} |" for task, count in m.counts.get("task", {}).items()]
    subtypes = [f"| {sub} | {count} |" for sub, count in m.counts.get("subtype", {}).items()]
    body = [
        f"# medtemporal {m.benchmark}", "",
        f"{family.description}.", "",
        (f"Built by medtemporal {m.created_with} (builder version {m.version}, seed {m.seed}) and exported by "
         f"medtemporal {__version__}. Data: {origin}. Licence of this folder: `{LICENCES[m.licence]}` (manifest "
         f"licence `{m.licence}`)."), "",
        "## Counts", "", f"{n} items.", "", "| task | items |", "|---|---|", *counts, "",
        "| subtype | items |", "|---|---|", *subtypes, "",
        "## Audit", "", *_audit_lines(bench), "",
        "## Use", "",
        "```python",
        "from datasets import load_dataset",
        "ds = load_dataset(\"parquet\", data_files={\"test\": \"" + DATA_FILE + "\"}, split=\"test\")  # or the Hub id",
        "row = ds[0]   # images: PIL images in the item's order" + ("; volumes: nibabel images" if "volumes" in schema else ""),
        "```", "",
        (f"`sent_images` lists which of an item's images (positions in `image_refs`) medtemporal's default protocol "
         f"for this benchmark (`{protocol_name(bench)}`) sends, in the order it sends them: use those to reproduce "
         "its requests."), "",
        ("Score a model's answers with the family's released rules and patient-clustered intervals with "
         "`medtemporal run` on the benchmark folder, or `medtemporal import-predictions` for answers made elsewhere."),
        "",
    ]
    if citation:
        body += ["## Citation", "", "```bibtex", citation.strip(), "```", ""]
    return front + "\n".join(body)


def to_hf(bench: Benchmark, out: Path, *, overwrite: bool = False) -> list[Path]:
    """Write the Hub folder ``out`` for ``bench`` (images embedded); return ``[out]``.

    Raises:
        InvalidInputError: the benchmark is ``credentialed``.
    """
    if bench.manifest.licence not in LICENCES:
        raise InvalidInputError(
            f"{bench.path} holds {bench.manifest.licence} data, whose data-use agreement forbids redistribution, so "
            "it cannot be exported for the Hub; export --format parquet for your own use, or build from phantoms."
        )
    with_volumes = has_volumes(bench)
    schema = features(with_volumes)
    table = rows(bench, with_volumes, embed=True)
    with folder_atomically(out, overwrite=overwrite) as tmp:
        manifest = bench.manifest.model_copy(update={"image_root": None})  # no machine path leaves with the data
        size = write_table(table, schema, tmp / DATA_FILE,
                           {**metadata(bench), "medtemporal.manifest": manifest.model_dump_json()})
        (tmp / "README.md").write_text(card(bench, schema, size), encoding="utf-8")
    return [out]
