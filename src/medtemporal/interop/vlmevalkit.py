"""VLMEvalKit TSVs: one file per layout (MCQ, Y/N, VQA), each question carrying our instruction and visit framing.

VLMEvalKit builds a custom dataset from ``$LMUData/<name>.tsv`` by its columns: with ``A`` and ``B``
it is an MCQ dataset whose prompt is ``Hint: {hint}`` / ``Question: {question}`` / ``Options:`` the
lettered options / "Please select the correct answer from the options above."; anything else becomes a
VQA dataset whose prompt is ``{question}`` alone (``vlmeval/dataset/image_mcq.py`` ``build_prompt``;
``image_base.py`` ``build_prompt``). Images always come first. So (`medtemporal.interop.views`):

- MCQ (choice items): ``question`` is our prompt without its options block (VLMEvalKit lists them),
  ``hint`` the framing sentence ("The 5 images are shown in order: image 1 is T1, …");
- Y/N (yes/no items) and VQA (open items; an ordering answer as its JSON list): ``question`` is the
  framing, then our whole prompt.

Columns: ``index, question, [A …], answer, image_path`` (absolute paths; a list for several images),
or with ``--embed-images`` ``image`` (base64) plus ``image_path`` (file names VLMEvalKit unpacks them
to, named by item id so a re-export never reuses stale files); ``[hint,] category`` (task),
``l2-category`` (subtype), ``split``, ``id``, ``sent_images`` (which of the item's images these are: a JSON list of
positions in the item's ``images``, `medtemporal.interop.views.sent_images`). A benchmark with several layouts writes
``<stem>_mcq.tsv``, ``<stem>_yorn.tsv``, ``<stem>_vqa.tsv`` beside ``out``.

Items without images (MS-CXR-T's sentence pairs) carry ``image_path`` ``[]``: VLMEvalKit sends their text
alone. With ``--embed-images`` they go to a file of their own without the ``image`` column
(``<stem>_<layout>_text.tsv``): VLMEvalKit reads an ``image`` cell of 64 characters or fewer as the index of
another row whose image to reuse (``image_base.py``, ``ImageBaseDataset.__init__``), and drops a row whose cell
is empty.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from medtemporal.benchmark import Benchmark
from medtemporal.interop.files import refuse_existing
from medtemporal.interop.parquet import answer_text, read_bytes
from medtemporal.interop.views import ToolView, tool_views
from medtemporal.schema import Item
from medtemporal.writes import replacing

LAYOUTS = {"choice": "mcq", "yesno": "yorn", "open": "vqa", "ordering": "vqa"}
"""VLMEvalKit layout of each answer type."""


def layout_of(item: Item, embed: bool) -> str:
    """The file an item goes to: its layout, and with ``embed`` a ``_text`` one of its own when it has no image."""
    layout = LAYOUTS[item.answer_type]
    return f"{layout}_text" if embed and not item.images else layout


def targets(bench: Benchmark, out: Path, embed: bool = False) -> dict[str, Path]:
    """The file each layout of ``bench`` is written to: ``out`` itself when there is one layout."""
    layouts = list(dict.fromkeys(layout_of(item, embed) for item in bench.items))
    if len(layouts) == 1:
        return {layouts[0]: out}
    return {layout: out.with_name(f"{out.stem}_{layout}{out.suffix or '.tsv'}") for layout in layouts}


def _media(view: ToolView, embed: bool) -> dict[str, str]:
    def one_or_list(values: list[str]) -> str:
        return values[0] if len(values) == 1 else repr(values)

    if not embed:
        return {"image_path": one_or_list([str(p) for p in view.images])}
    encoded = [base64.b64encode(read_bytes(p)).decode("ascii") for p in view.images]
    names = [f"{view.item.id}_{n}{p.suffix or '.png'}" for n, p in enumerate(view.images)]
    return {"image": one_or_list(encoded), "image_path": one_or_list(names)}


def frame(views: list[ToolView], layout: str, embed: bool) -> Any:
    """The TSV of one layout as a pandas DataFrame (a ``_text`` layout: no ``image`` column)."""
    import pandas as pd

    embed = embed and not layout.endswith("_text")
    layout = layout.removesuffix("_text")
    letters = sorted({k for v in views for k in v.item.options}) if layout == "mcq" else []
    rows = []
    for n, view in enumerate(views):
        it = view.item
        question = view.text_without_options() if layout == "mcq" else view.prompt
        rows.append({
            "index": n, "question": question, **{x: it.options.get(x, "") for x in letters},
            "answer": answer_text(it), **_media(view, embed),
            **({"hint": view.framing} if layout == "mcq" else {}),
            "category": it.task, "l2-category": it.subtype, "split": "test", "id": it.id,
            "sent_images": json.dumps(list(view.sent)),
        })
    media = ["image", "image_path"] if embed else ["image_path"]
    columns = ["index", "question", *letters, "answer", *media, *(["hint"] if layout == "mcq" else []),
               "category", "l2-category", "split", "id", "sent_images"]
    return pd.DataFrame(rows, columns=columns)


def to_vlmevalkit(bench: Benchmark, out: Path, *, embed_images: bool = False, overwrite: bool = False) -> list[Path]:
    """Write ``bench`` as VLMEvalKit TSVs (one per layout); return the files written.

    Args:
        bench: the benchmark.
        out: the ``.tsv`` file (for several layouts: ``<stem>_<layout>.tsv`` beside it).
        embed_images: base64 images in an ``image`` column (the file travels alone) instead of absolute paths.
        overwrite: replace existing files; without it, any file this export would write that exists is refused
            before anything is written.
    """
    paths = targets(bench, out, embed_images)
    refuse_existing(list(paths.values()), overwrite)
    by_layout: dict[str, list[ToolView]] = {layout: [] for layout in paths}
    for view in tool_views(bench):
        by_layout[layout_of(view.item, embed_images)].append(view)
    out.parent.mkdir(parents=True, exist_ok=True)
    for layout, views in by_layout.items():
        with replacing(paths[layout]) as tmp:
            frame(views, layout, embed_images).to_csv(tmp, sep="\t", index=False, lineterminator="\n")
    return list(paths.values())
