"""``medtemporal build temmed``: its options, and the assembly of a benchmark from CheXpert Plus or the released files.

``medtemporal build temmed --chexpert-plus DIR --out DIR``
    builds the three tasks and the knowledge corpus from CheXpert Plus (or a
    phantom folder in its layout, ``medtemporal phantoms chexpert-plus``) with the
    paper's rules (`pipeline`, `text`, `vqa`), and stores each
    test item's retrieved references (`refs`).

``medtemporal build temmed --official DIR --chexpert-plus DIR --out DIR``
    imports the released JSON files (`release`).

The folder also gets ``corpus.jsonl`` (the knowledge corpus) and
``embeddings/`` (cached vectors). References are retrieved with ``--embedder``,
by default the learned `refs.LEARNED_EMBEDDER` for real data and the offline
``pixel`` thumbnail for phantoms (`refs.default_embedder`); the manifest
records the spec and the encoder's identity (weight files, hub revision).
Tasks: ``vqa`` (yes/no), ``report`` (open) and ``image_pair`` (A/B/C); answers
are extracted and scored exactly as the release does (`extract`, `metrics`).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

from medtemporal.backends.uri import shown_uri
from medtemporal.family import (
    InvalidInputError, Item, Manifest, PromptSet, add_llm_options, add_official_option, imported, licence_of,
    sha256_file,
)
from medtemporal.benchmarks.temmed.release import read_official
from medtemporal.benchmarks.temmed.pipeline import (
    BENCHMARK,
    TASKS,
    VERSION,
    collect_instances,
    default_patterns,
    pair_drafts,
    pair_items,
    patient_overlap,
    report_items,
    split_by_patient,
    split_random,
    vqa_candidates,
    vqa_items,
)
from medtemporal.benchmarks.temmed.refs import (
    LEARNED_EMBEDDER,
    MAX_K,
    ablation_images,
    default_embedder,
    image_references,
    statement_references,
)
from medtemporal.benchmarks.temmed.known_releases import RELEASES
from medtemporal.benchmarks.temmed.vqa import rephrase, select, template_question
from medtemporal.retrieval import Embedder, PairEntry, load_embedder, save_corpus
from medtemporal.sources.chexpert_plus import find_csv, load_timelines

CORPUS = "corpus.jsonl"
EMBEDDINGS = "embeddings"
PAPER = {"test_size": 1000, "vqa_items": 2000}
SPLITS = ("random", "patient")
TEST_SHARE = 4
"""Without ``--test-size``, data with fewer than ``TEST_SHARE`` × the paper's 1,000 instances gives 1 in ``TEST_SHARE``
of its instances to the test set, so the retrieval corpus keeps the rest (`default_test_size`)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build temmed``."""
    src = p.add_argument_group("data")
    src.add_argument("--chexpert-plus", type=Path, required=True, metavar="DIR",
                     help="CheXpert Plus root (holds df_chexpert_plus_240401.csv and PNG/); also the image root")
    add_official_option(src, "import the released TemMed-Bench JSON files from DIR instead of building", folder=True)
    rules = p.add_argument_group("construction (defaults are the paper's)")
    rules.add_argument("--test-size", type=int, metavar="N",
                       help=f"test instances (default: the paper's {PAPER['test_size']}; on data with fewer than "
                       f"{TEST_SHARE * PAPER['test_size']} instances, one in {TEST_SHARE} of them, with a note)")
    rules.add_argument("--split", choices=SPLITS, default="random",
                       help="random: N instances drawn at random, the rest the corpus (the paper's rule, default; a "
                       "patient may be in both); patient: whole patients, none in both")
    rules.add_argument("--vqa-items", type=int, default=PAPER["vqa_items"], metavar="N",
                       help="VQA questions, half answered Yes (default %(default)s; fewer if the data has fewer)")
    rules.add_argument("--pair-items", type=int, metavar="N",
                       help="image-pair questions (default: every statement with two valid distractor pairs)")
    rules.add_argument("--pathology-keywords", metavar="LIST",
                       help="comma-separated pathology keywords for image-pair statements "
                       "(default: atelectasis, cardiomegaly, cardiomediastinum, consolidation, edema, effusion, "
                       "fracture, lesion, opacity, pneumonia, pneumothorax)")
    rules.add_argument("--tasks", default=",".join(TASKS), metavar="LIST",
                       help="tasks to build, comma-separated (default %(default)s)")
    add_llm_options(p, purpose="write VQA questions with this model (the paper's approach); default: offline "
                    "templates", data="report sentences", old="vqa", title="VQA questions")
    ret = p.add_argument_group("retrieval")
    ret.add_argument("--embedder", metavar="SPEC",
                     help="encoder for retrieved references: clip:NAME_OR_PATH (a Hugging Face CLIP or SigLIP, "
                     "fetched on first use), open_clip:PATH, pixel[:SIZE], or none (an --official import keeps only "
                     f"the released references); default: {LEARNED_EMBEDDER} for real data, pixel for phantoms")


def default_test_size(instances: int) -> tuple[int, str | None]:
    """The test size when the user names none: the paper's 1,000, or on smaller data 1 in `TEST_SHARE` of the
    ``instances`` (at least 1), with a note saying so (None when the paper's size is used)."""
    paper = PAPER["test_size"]
    if instances >= TEST_SHARE * paper:
        return paper, None
    size = max(1, instances // TEST_SHARE)
    return size, (f"the data has {instances} instances, too few for the paper's {paper} test instances beside a "
                  f"retrieval corpus; using {size} (1 in {TEST_SHARE}) as the test set and the rest as the corpus "
                  "(pass --test-size N to choose).")


def _tasks(value: str) -> tuple[str, ...]:
    tasks = tuple(t.strip() for t in value.split(",") if t.strip())
    unknown = [t for t in tasks if t not in TASKS]
    if unknown or not tasks:
        raise InvalidInputError(f"--tasks {value!r} names unknown tasks; use a comma-separated subset of {', '.join(TASKS)}.")
    return tasks


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Build (or import) TemMed-Bench as the parsed options say; writes the corpus into ``args.out``."""
    root = args.chexpert_plus
    if not root.is_dir():
        raise InvalidInputError(f"--chexpert-plus {root} is not a folder; pass the CheXpert Plus root.")
    root = root.resolve()
    tasks = _tasks(args.tasks)
    if args.official is not None:
        return _import(args, root, tasks)
    for name in ("test_size", "vqa_items"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise InvalidInputError(f"--{name.replace('_', '-')} must be at least 1.")
    if args.pair_items is not None and args.pair_items < 1:
        raise InvalidInputError("--pair-items must be at least 1.")
    patterns = default_patterns(args.pathology_keywords)
    csv = find_csv(root)
    timelines = load_timelines(root)
    licence = timelines[0].licence if timelines else licence_of(root)
    collected = collect_instances(timelines, root)
    instances = collected.instances
    if not instances:
        raise InvalidInputError(
            f"No TemMed instances in {root} (left out: {dict(collected.exclusions)}); check the CheXpert Plus folder."
        )
    test_size, note = default_test_size(len(instances)) if args.test_size is None else (args.test_size, None)
    if note:
        print(f"temmed: {note}", file=sys.stderr)
    splitter = split_by_patient if args.split == "patient" else split_random
    test_idx, corpus_idx = splitter(instances, test_size, random.Random(args.seed))
    test = [instances[i] for i in test_idx]
    corpus = [PairEntry(id=k, patient_id=instances[i].patient_id, historical=instances[i].historical,
                        current=instances[i].current, report=instances[i].report) for k, i in enumerate(corpus_idx)]
    out: Path = args.out
    spec = args.embedder or default_embedder(licence)
    if spec == "none":
        raise InvalidInputError("--embedder none applies to --official imports only; a build needs an encoder, "
                                "e.g. --embedder pixel.")
    embedder = load_embedder(spec)
    refs = image_references([(t.historical, t.current) for t in test], corpus, root, embedder, out / EMBEDDINGS)
    out.mkdir(parents=True, exist_ok=True)
    save_corpus(out / CORPUS, corpus)
    ablation = ablation_images(len(test), corpus, random.Random(f"{args.seed}:ablation"))
    extra = {i: {"retriever": "pairwise", "retrieval": refs[i], "ablation": ablation[i]} for i in range(len(test))}

    items: list[Item] = []
    question_sources: Counter[str] = Counter()
    vqa_excluded: Counter[str] = Counter()
    if "vqa" in tasks:
        drafts = select(vqa_candidates(test, patterns, vqa_excluded), args.vqa_items, random.Random(f"{args.seed}:vqa"),
                        vqa_excluded)
        if args.llm:
            prompt = PromptSet().text("temmed_vqa_rephrase")
            questions = rephrase(drafts, args.llm, prompt, licence=licence,
                                 allow_remote_data=args.allow_remote_data, cache_path=args.llm_cache)
        else:
            questions = [(template_question(d), "template") for d in drafts]
        question_sources.update(source for _, source in questions)
        items += vqa_items(test, drafts, questions, extra)
    if "report" in tasks:
        items += report_items(test, extra)
    exclusions = {**collected.exclusions, **vqa_excluded}
    if "image_pair" in tasks:
        pdrafts, skipped = pair_drafts(test, patterns, args.pair_items, random.Random(f"{args.seed}:pairs"))
        tfidf = statement_references([d.statement.text for d in pdrafts], corpus)
        pextra = {k: {"retriever": "tfidf", "retrieval": {"tfidf": tfidf[k]}, "ablation": ablation[d.target]}
                  for k, d in enumerate(pdrafts)}
        items += pair_items(test, pdrafts, pextra)
        exclusions.update({f"image_pair_{k}": v for k, v in skipped.items()})
    overlap = patient_overlap(test, [instances[i] for i in corpus_idx])
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence, image_root=str(root),
        config={"source": "chexpert-plus", "tasks": list(tasks), "test_size": test_size,
                "test_size_from": "--test-size" if args.test_size is not None else "scaled" if note else "paper",
                "test_instances": len(test), "corpus_instances": len(corpus), "vqa_items": args.vqa_items,
                "pair_items": args.pair_items, "pathology_keywords": sorted(patterns),
                "vqa_model": shown_uri(args.llm) if args.llm else None,
                "vqa_question_sources": dict(sorted(question_sources.items())),
                **_encoder(spec, embedder),
                "retrievers": sorted(refs[0]) if refs else [], "references_per_retriever": MAX_K,
                "split_rule": args.split, "split": overlap, "corpus_file": CORPUS},
        sources={csv.name: sha256_file(csv)},
        exclusions=dict(sorted(exclusions.items())),
    )
    return items, manifest


def _encoder(spec: str, embedder: Embedder) -> dict:
    """The manifest's record of the retrieval encoder: its spec and identity (weight files, hub revision)."""
    return {"embedder": spec, "embedder_identity": embedder.identity()}


def _import(args: argparse.Namespace, root: Path, tasks: tuple[str, ...]) -> tuple[list[Item], Manifest]:
    folder = args.official
    if not folder.is_dir():
        raise InvalidInputError(f"--official {folder} is not a folder; pass the folder holding the released JSON files.")
    official = read_official(folder, root)
    out: Path = args.out
    licence = licence_of(root)
    if args.embedder is None:  # real data: the learned encoder beside the released references; phantoms: none
        spec = None if licence == "synthetic" else default_embedder(licence)
    else:
        spec = None if args.embedder == "none" else args.embedder
    embedder = load_embedder(spec) if spec else None
    refs = None
    if embedder is not None:
        refs = image_references([(t.historical, t.current) for t in official.test], official.corpus, root,
                                embedder, out / EMBEDDINGS)
    out.mkdir(parents=True, exist_ok=True)
    save_corpus(out / CORPUS, official.corpus)
    ablation = ablation_images(len(official.test), official.corpus, random.Random(f"{args.seed}:ablation"))
    items = []
    for item in official.items:
        if item.task not in tasks:
            continue
        meta = {**item.meta, "ablation": ablation[item.meta["instance"]]}
        if refs is not None and item.task != "image_pair":
            meta["retrieval"] = {**meta["retrieval"], **refs[item.meta["instance"]]}
        items.append(Item.create(**{**item.model_dump(exclude={"id"}), "meta": meta}))
    release = imported({p.name: p for p in sorted(folder.glob("*.json"))}, root, releases=RELEASES)
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=release.licence, image_root=str(root),
        config={"source": "official", "tasks": list(tasks), "test_instances": len(official.test),
                "corpus_instances": len(official.corpus), "selected_vqa_file": official.selected_vqa,
                **(_encoder(spec, embedder) if spec and embedder else {"embedder": None}),
                "retrievers": ["official", *sorted(refs[0])] if refs else ["official"],
                "split": official.overlap, "corpus_file": CORPUS},
        sources=release.sources,
    )
    return items, manifest
