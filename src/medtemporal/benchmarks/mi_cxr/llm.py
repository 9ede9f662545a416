"""LLM-realised option text for MI-CXR (appendix A.6), with the labels fixed beforehand by rule.

The LLM only rewords what the rules already decided. For every selected item
of the summary qtypes the template draft already holds, per option, the
change types it asserts (`Draft.meta`); the LLM is asked to say exactly that,
with the paper's prompts (named templates in this family's ``prompts/``, found by `medtemporal.prompts`):

* ``single_entity_interval_summary`` — figure 5 (``mi_cxr_interval_summary_correct``)
  for the true trajectory, figure 6 (``mi_cxr_interval_summary_incorrect``) for
  each distractor, given its flipped change types;
* ``multi_entity_interval_summary`` — figure 7 (``mi_cxr_global_summary_correct``)
  for the focus abnormality, figure 8 (``mi_cxr_global_summary_incorrect``) for
  the others;
* ``icr_variant`` — figure 16 (``mi_cxr_icr_variant_distractors``) for the
  distractor statements, one per requested category; the correct statement
  stays the template's.

TEL and ICR keep their template text (the paper builds TEL entirely by rule,
and gives no prompt for ICR statements).

Every output is checked by rule before use: one sentence and at most one
semicolon, the abnormality named and no other, no laterality the annotation
lacks, visits T1…T5 mentioned in order, and for every directional change type
a matching word exactly when the option asserts it. If any output of an item
fails, the whole item keeps its template text (so the options of one item
never mix styles) and ``llm_text_rejected:<qtype>`` is counted. Responses are
kept in the response cache (every call goes through a `ModelSession`), so a rebuild with the same model gives the same text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from medtemporal.family import DataUse, GenerateConfig, Message, ModelSession, PromptSet, Request, TextPart
from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER, Candidate
from medtemporal.benchmarks.mi_cxr.text import INTERVALS, LETTERS, Draft, describe, trajectory, variant_statement
from medtemporal.benchmarks.mi_cxr.windows import (
    ABSENT,
    DIRECTIONAL,
    EMERGENCE,
    IMPROVEMENT,
    RESOLUTION,
    UNCHANGED,
    WORSENING,
    Track,
    Window,
)
from medtemporal.sources.mimic_qba import ENTITIES

PROMPTS = (
    "mi_cxr_interval_summary_correct",
    "mi_cxr_interval_summary_incorrect",
    "mi_cxr_global_summary_correct",
    "mi_cxr_global_summary_incorrect",
    "mi_cxr_icr_variant_distractors",
)
REWORDED = ("single_entity_interval_summary", "multi_entity_interval_summary", "icr_variant")

_WORDS = {
    EMERGENCE: "new appearance",
    RESOLUTION: "resolution",
    WORSENING: "worsening",
    IMPROVEMENT: "improvement, still present",
    UNCHANGED: "unchanged, still present",
    ABSENT: "absent at both visits",
}
_CATEGORY = {
    EMERGENCE: "New Appearance",
    RESOLUTION: "Resolution",
    WORSENING: "Severe Worsening",
    IMPROVEMENT: "Marked Improvement",
}
_LEXICON = {
    EMERGENCE: re.compile(r"\bnew(ly)?\b|appear|develop|emerg", re.I),
    RESOLUTION: re.compile(r"resol|\bclear(s|ed)?\b|\bno longer\b|disappear", re.I),
    WORSENING: re.compile(r"wors|increas|progress|enlarg|deteriorat", re.I),
    IMPROVEMENT: re.compile(r"improv|decreas|regress|reduc|smaller", re.I),
}
_SIDES = ("left", "right", "bilateral")


def check_text(text: str, track: Track, changes: Sequence[str], *, timeline: bool = True) -> str | None:
    """Why ``text`` does not state ``changes`` of ``track`` within the rules, or None if it does.

    >>> t = Track("pneumothorax", (False, True, True, True, True), ("emergence", "unchanged", "unchanged", "unchanged"))
    >>> check_text("A pneumothorax newly appears between T1 and T2 and persists unchanged through T5.", t, t.changes)
    >>> check_text("A pneumothorax resolves between T1 and T2 and stays so through T5.", t, t.changes)
    'missing a new appearance word'
    """
    text = text.strip()
    low = text.lower()
    if not text or len(text) > 500:
        return "empty or too long"
    if len(re.findall(r"[.!?](?=\s+\S)", text)) > 0 or text.count(";") > 1:
        return "more than one sentence or semicolon"
    if track.entity not in low:
        return "abnormality not named"
    if any(e != track.entity and e in low for e in ENTITIES):
        return "another abnormality named"
    sides = {s for s in _SIDES if re.search(rf"\b{s}\b", low)}
    if sides and track.laterality != "bilateral" and sides != {track.laterality}:
        return "laterality not in the annotation"
    if timeline:
        visits = [int(v) for v in re.findall(r"\bT([1-5])\b", text)]
        if not visits or visits[0] != 1 or visits[-1] != 5 or visits != sorted(visits):
            return "visits T1..T5 not mentioned in order"
    for change in DIRECTIONAL:
        said = bool(_LEXICON[change].search(text))
        if said != (change in changes):
            return f"{'unwanted' if said else 'missing a'} {_WORDS[change].split(',')[0]} word"
    return None


def _input(track: Track, changes: Sequence[str], **extra: Any) -> dict[str, Any]:
    return {
        "abnormality": track.entity,
        **({"laterality": track.laterality} if track.laterality else {}),
        **extra,
        "intervals": [{"interval": i, "change": _WORDS[c]} for i, c in zip(INTERVALS, changes)],
    }


def _json_object(text: str) -> dict[str, Any] | None:
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class _Job:
    """The requests of one item and how to turn their answers into option texts."""

    index: int
    draft: Draft
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(prompt name, template values) per request."""


@dataclass
class TextModel:
    """Rewords summary options with an LLM backend, caching every response."""

    session: ModelSession
    seed: int = 0
    prompts: PromptSet = field(default_factory=PromptSet)
    max_tokens: int = 512

    def identity(self) -> dict[str, Any]:
        """What wrote the text: backend identity and the hash of each prompt template."""
        return {"model": self.session.identity(), "prompts": {p: self.prompts.hash(p) for p in PROMPTS}}

    def _request(self, prompt: str, values: dict[str, Any]) -> Request:
        text = self.prompts.render(prompt, **values)
        config = GenerateConfig(temperature=0.0, max_tokens=self.max_tokens, seed=self.seed)
        return Request((Message("user", (TextPart(text),)),), config)

    def reword(
        self, chosen: Sequence[Candidate], found: Sequence[Window], drafts: Sequence[Draft], exclusions: Counter[str]
    ) -> list[tuple[Draft, str]]:
        """Each draft with LLM text where every output passes the checks, else unchanged; with its source.

        Calls the model once per build: the backend is closed afterwards.
        """
        jobs = [self._plan(i, c, found[c.window], d) for i, (c, d) in enumerate(zip(chosen, drafts)) if c.qtype in REWORDED]
        requests = [self._request(p, v) for job in jobs for p, v in job.calls]
        answers = iter(self.session.complete(requests, desc="option text"))
        out = [(d, "template") for d in drafts]
        for job in jobs:
            c = chosen[job.index]
            texts = [next(answers) for _ in job.calls]
            options = self._options(c, found[c.window], job.draft, texts)
            if options is None:
                exclusions[f"llm_text_rejected:{c.qtype}"] += 1
            else:
                out[job.index] = (replace(job.draft, options=options), "llm")
        return out

    # ------------------------------------------------------------ per qtype

    @staticmethod
    def _claims(c: Candidate, window: Window, draft: Draft) -> dict[str, tuple[Track, tuple[str, ...]]]:
        if c.qtype == "icr_variant":
            return {x: (window.track(c.entity), (claim,)) for x, claim in draft.meta["claims"].items()}
        return {
            x: (window.track(v["abnormality"]), tuple(v["changes"])) for x, v in draft.meta["option_claims"].items()
        }

    def _plan(self, index: int, c: Candidate, window: Window, draft: Draft) -> _Job:
        job = _Job(index, draft)
        claims = self._claims(c, window, draft)
        wrong = [x for x in LETTERS if x != draft.answer]
        if c.qtype == "single_entity_interval_summary":
            track = window.track(c.entity)
            if draft.answer != NULL_LETTER:
                job.calls.append(("mi_cxr_interval_summary_correct", {"input": json.dumps(_input(track, track.changes))}))
            truth = trajectory(describe(track), track.changes)
            for x in wrong:
                values = _input(track, claims[x][1], correct_summary=truth)
                job.calls.append(("mi_cxr_interval_summary_incorrect", {"input": json.dumps(values)}))
        elif c.qtype == "multi_entity_interval_summary":
            if draft.answer != NULL_LETTER:
                track = claims[draft.answer][0]
                payload = {track.entity: _input(track, track.changes)}
                job.calls.append(("mi_cxr_global_summary_correct", {"input": json.dumps(payload)}))
            payload = {}
            for x in wrong:
                track, changes = claims[x]
                payload[track.entity] = _input(track, changes, correct_summary=trajectory(describe(track), track.changes))
            job.calls.append(("mi_cxr_global_summary_incorrect", {"input": json.dumps(payload)}))
        else:
            track = window.track(c.entity)
            actual = draft.meta["actual"]
            correct = variant_statement(describe(track), actual) if actual in DIRECTIONAL else (
                f"The {describe(track)} is {'unchanged' if actual == UNCHANGED else 'absent at both visits'}."
            )
            categories = ", ".join(_CATEGORY[claims[x][1][0]] for x in wrong)
            job.calls.append(("mi_cxr_icr_variant_distractors", {"n": len(wrong), "categories": categories, "statement": correct}))
        return job

    def _options(self, c: Candidate, window: Window, draft: Draft, texts: list[str]) -> dict[str, str] | None:
        claims = self._claims(c, window, draft)
        wrong = [x for x in LETTERS if x != draft.answer]
        written: dict[str, str] = {}
        answers = iter(texts)
        if c.qtype == "single_entity_interval_summary":
            for x in ([draft.answer] if draft.answer != NULL_LETTER else []) + wrong:
                written[x] = next(answers).strip()
        elif c.qtype == "multi_entity_interval_summary":
            if draft.answer != NULL_LETTER:
                got = _json_object(next(answers)) or {}
                written[draft.answer] = str(got.get(claims[draft.answer][0].entity, ""))
            got = _json_object(next(answers)) or {}
            if set(got) != {claims[x][0].entity for x in wrong}:
                return None
            for x in wrong:
                written[x] = str(got[claims[x][0].entity])
        else:
            lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line) for line in next(answers).splitlines()]
            lines = [line.strip() for line in lines if line.strip()]
            if len(lines) != len(wrong):
                return None
            written = dict(zip(wrong, lines))
        for x, text in written.items():
            track, changes = claims[x]
            if check_text(text, track, changes, timeline=c.qtype != "icr_variant") is not None:
                return None
        options = {**draft.options, **written}
        normal = [re.sub(r"\W+", " ", options[x]).strip().lower() for x in LETTERS]
        if len(set(normal)) != len(LETTERS):
            return None
        return options


def open_text_model(
    uri: str, cache_path: str | Path | None, seed: int, licence: str, allow_remote_data: bool
) -> TextModel:
    """The text model named by ``uri``, refusing to send credentialed annotations to a remote endpoint."""
    use = DataUse("mi-cxr", licence, allow_remote_data)  # type: ignore[arg-type]
    return TextModel(ModelSession.open(uri, use=use, cache_path=cache_path), seed)
