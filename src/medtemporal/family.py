"""Everything a benchmark family needs, in one import: ``from medtemporal.family import ...``.

A family (a folder ``medtemporal/benchmarks/<name>/`` or a third-party package in the ``medtemporal`` entry-point
group; ``medtemporal new-family NAME`` writes one that passes ``medtemporal check NAME``) registers one
`BenchmarkSpec` and the plugins it names. This module re-exports what that takes: the contract and its parts,
the registry, the item schema and the benchmark folder, the errors, the shared build options (``--llm``,
``--official``), released files and published rows, phantom
kinds and their manifest, atomic writes, the demo's steps, the backend and protocol base classes, prompt templates and metrics. What a family's own report
uses is `medtemporal.report.family` (imported only when a report is written, so registering a family does not
load the report machinery); the shared data readers are `medtemporal.sources`.

>>> from medtemporal.family import BenchmarkSpec, register
>>> BenchmarkSpec.__name__, register.__name__
('BenchmarkSpec', 'register')
"""

from __future__ import annotations

from medtemporal.backends.base import (
    Backend, GenerateConfig, Message, Request, RequestError, Response, TextPart,
)
from medtemporal.backends.session import DataUse, ModelSession, complete
from medtemporal.benchmark import Benchmark, Manifest, load, save
from medtemporal.build_options import Imported, add_llm_options, add_official_option, imported
from medtemporal.demo_steps import DemoSteps, cxr_build, cxr_phantoms
from medtemporal.checksums import sha256_file
from medtemporal.contract import (
    AuditRules, BenchmarkSpec, DemoSection, JudgeHook, Published, RunDefaults, ScoreGroups, Variant, spec,
)
from medtemporal.errors import (
    InvalidInputError, MedTemporalError, MissingDependencyError, UnavailableError, UndefinedMetricWarning,
    UnknownNameError,
)
from medtemporal.phantoms.kinds import PhantomKind
from medtemporal.phantoms.out import prepare_out
from medtemporal.prompts import PromptSet
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request, image_parts
from medtemporal.provenance import (
    PHANTOM_TRUTH, Release, holds_phantoms, licence_of, most_restrictive, release_licence, write_phantom_manifest,
)
from medtemporal.published import NoneFound, PublishedColumn, PublishedRow, PublishedTable
from medtemporal.registry import register
from medtemporal.schema import Finding, ImageRef, Item, Licence, Record, Score, Study, Timeline, content_hash
from medtemporal.scoring.metrics import Answer, Metric, chance_level, is_correct, metric
from medtemporal.writes import write_atomic

__all__ = [
    "Answer", "AuditRules", "Backend", "Benchmark", "BenchmarkSpec", "DataUse", "DemoSection", "DemoSteps", "Finding",
    "Generate", "GenerateConfig", "ImageRef", "Imported", "InvalidInputError", "Item", "JudgeHook", "Licence",
    "Manifest", "MedTemporalError", "Message", "Metric", "MissingDependencyError", "ModelSession", "NoneFound",
    "PHANTOM_TRUTH", "PhantomKind", "PromptSet", "Published", "PublishedColumn", "PublishedRow", "PublishedTable",
    "Record", "Release", "Request", "RequestError", "Response", "RunDefaults", "Score", "ScoreGroups", "Solution",
    "Solver", "Study", "TextPart", "Timeline", "UnavailableError", "UndefinedMetricWarning", "UnknownNameError",
    "Variant", "add_llm_options", "add_official_option", "answer_request", "chance_level", "complete", "content_hash",
    "cxr_build", "cxr_phantoms", "holds_phantoms", "image_parts", "imported", "is_correct", "licence_of", "load",
    "metric", "most_restrictive", "prepare_out", "register", "release_licence", "save", "sha256_file", "spec",
    "write_atomic", "write_phantom_manifest",
]
