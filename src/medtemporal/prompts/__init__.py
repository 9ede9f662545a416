"""Prompt templates: core's generic ones beside this module, each family's in its own ``prompts/`` folder.

A template is a ``<name>.txt`` file. Core holds the ones any benchmark may
use (``mcq_direct``, the stage-wise, caption-then-reason and
shuffled-timestamps protocols' templates); a benchmark family ships its own in
``prompts/`` beside the module that defines its ``build``, so a plugin family registered through
the ``medtemporal`` entry-point group or `medtemporal.registry.register` brings
its prompts with it. Names are global: two templates of one name are refused.

Templates use ``$name`` placeholders (`string.Template`), so JSON and braces
in prompts need no escaping. Leading lines starting with ``##`` are a header
comment saying where the wording comes from (paper figure, release file and
line); they are not sent, and not part of the template's hash. A user replaces any template from a file
(``--prompt NAME=FILE``) to use an author's exact wording; the replacement must keep the
template's placeholders (`required_fields`), and the hash of each template used is recorded in the run.

>>> PromptSet().render("mcq_direct", question="Q?", options="A. x", n_images=5)[:10]
'The images'
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, NamedTuple

from medtemporal.errors import InvalidInputError, UnknownNameError

if TYPE_CHECKING:
    from medtemporal.contract import BenchmarkSpec

CORE = "core"
"""The owner named for the templates beside this module."""
OPTIONAL_FIELDS = frozenset({"n_images"})
"""Placeholders a replacement may leave out: the image count, which the images sent show anyway."""


class Source(NamedTuple):
    """Where a template comes from: its owner (``core`` or the families that register the folder) and its file."""

    owner: str
    path: Path


def strip_comments(text: str) -> str:
    """``text`` without its leading ``##`` comment lines (a template's header: where its wording comes from).

    >>> strip_comments("## Source: figure 5\\nDescribe $x.")
    'Describe $x.'
    """
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("##"):
        lines.pop(0)
    return "".join(lines)


def placeholders(text: str) -> set[str]:
    """The ``$name`` / ``${name}`` placeholders of template ``text``.

    >>> sorted(placeholders("$question, ${options} and $$5"))
    ['options', 'question']
    """
    return {m.group("named") or m.group("braced") for m in Template.pattern.finditer(text)
            if m.group("named") or m.group("braced")}


def prompt_folder(spec: BenchmarkSpec) -> Path | None:
    """The folder of family ``spec``'s templates: ``prompts/`` beside the module that defines its ``build``
    (None when that module has no file)."""
    module = sys.modules.get(getattr(spec.build, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    return Path(file).parent / "prompts" if file else None


def _folders() -> tuple[tuple[str, Path], ...]:
    """(owner, folder) of core and of every family's existing prompt folder, one entry per folder: the families
    registered so far, and the built-in ones not imported yet (``prompts/`` in their package, found without
    importing it, so a run imports no other family's code)."""
    from medtemporal.registry import declared, registered

    found = [(entry.name, prompt_folder(entry.obj)) for entry in registered("benchmark")]
    for name, module in declared("benchmark").items():
        package = importlib.util.find_spec(module)
        if package is not None and package.submodule_search_locations:
            found.append((name, Path(package.submodule_search_locations[0]) / "prompts"))
    owners: dict[Path, list[str]] = {}
    for name, folder in found:
        if folder is not None and folder.is_dir():
            owners.setdefault(folder.resolve(), []).append(name)
    core = Path(__file__).resolve().parent
    return ((CORE, core), *((", ".join(names), folder) for folder, names in owners.items() if folder != core))


def templates() -> dict[str, Source]:
    """Name → `Source` of every built-in template: core's and each registered family's (listed afresh each
    call, a few dozen files).

    Raises:
        InvalidInputError: two templates share a name (both files named).
    """
    found: dict[str, Source] = {}
    for owner, folder in _folders():
        for path in sorted(folder.glob("*.txt")):
            name = path.name[:-4]
            if name in found:
                raise InvalidInputError(
                    f"Two prompt templates are named {name!r}: {found[name].path} ({found[name].owner}) and "
                    f"{path} ({owner}); rename one, as template names are shared by every benchmark."
                )
            found[name] = Source(owner, path)
    return found


def available() -> list[str]:
    """Names of the built-in templates (core's and every registered family's)."""
    return sorted(templates())


def builtin_text(name: str) -> str:
    """The file text of built-in template ``name``, header comment included.

    Raises:
        UnknownNameError: no template has that name (the sentence lists those that do).
    """
    found = templates()
    if name not in found:
        raise UnknownNameError(f"Unknown prompt {name!r}; available: {', '.join(sorted(found))}.")
    return found[name].path.read_text(encoding="utf-8")


def required_fields(name: str) -> set[str]:
    """The placeholders a replacement of built-in template ``name`` must keep: all of the built-in's
    but `OPTIONAL_FIELDS` (a value left out would never reach the model)."""
    return placeholders(strip_comments(builtin_text(name))) - OPTIONAL_FIELDS


class PromptSet:
    """The built-in templates, with optional replacements read from files."""

    def __init__(self, overrides: dict[str, str | Path] | None = None) -> None:
        self._text: dict[str, str] = {}
        for name, path in (overrides or {}).items():
            required = required_fields(name)  # refuses an unknown name first
            path = Path(path)
            if not path.is_file():
                raise InvalidInputError(f"Prompt file {path} for {name!r} does not exist; check --prompt {name}=FILE.")
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInputError(
                    f"Prompt file {path} for {name!r} is not UTF-8 text (byte {exc.start}); save it as UTF-8."
                ) from None
            if not Template(text).is_valid():
                raise InvalidInputError(
                    f"Prompt file {path} for {name!r} has a `$` that starts no placeholder "
                    f"(line {_stray_dollar_line(text)}); write $$ for a literal dollar sign, or $name for a value."
                )
            missing = required - placeholders(strip_comments(text))
            if missing:
                raise InvalidInputError(
                    f"Prompt file {path} for {name!r} lacks {_fields(missing)}, so the model would never see "
                    f"{'it' if len(missing) == 1 else 'them'}; a replacement of {name!r} must use {_fields(required)}."
                )
            self._text[name] = text

    def text(self, name: str) -> str:
        """The raw template ``name``."""
        if name not in self._text:
            self._text[name] = builtin_text(name)
        return strip_comments(self._text[name])

    def render(self, name: str, **values: object) -> str:
        """Fill template ``name``; a missing value names the placeholder."""
        text = self.text(name)  # outside the try: an unknown name is a KeyError too
        try:
            return Template(text).substitute(values).strip()
        except KeyError as exc:
            raise InvalidInputError(f"Prompt {name!r} needs a value for ${exc.args[0]}; fix the template.") from None
        except ValueError:  # a stray `$`
            raise InvalidInputError(
                f"Prompt {name!r} has a `$` that starts no placeholder (line {_stray_dollar_line(text)}); "
                "write $$ for a literal dollar."
            ) from None

    def hash(self, name: str) -> str:
        """sha256 (first 16 hex digits) of template ``name`` as used."""
        return hashlib.sha256(self.text(name).encode("utf-8")).hexdigest()[:16]


def _fields(names: set[str]) -> str:
    """``$a, $b and $c``."""
    listed = [f"${n}" for n in sorted(names)]
    return listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} and {listed[-1]}"


def _stray_dollar_line(text: str) -> int:
    """The 1-based line of the first ``$`` in ``text`` that `string.Template` cannot read (0 when none)."""
    for match in Template.pattern.finditer(text):
        if match.group("invalid") is not None:
            return text.count("\n", 0, match.start("invalid")) + 1
    return 0
