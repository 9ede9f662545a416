"""Every prompt template in one place, as ``<name>.txt`` files beside this module.

Templates use ``$name`` placeholders (`string.Template`), so JSON and braces
in prompts need no escaping. Leading lines starting with ``##`` are a header
comment saying where the wording comes from (paper figure, release file and
line); they are not sent, and not part of the template's hash. A user replaces any template from a file
(``--prompt NAME=FILE``) to use an author's exact wording; the hash of each
template used is recorded in the run.

>>> PromptSet().render("mcq_direct", question="Q?", options="A. x", n_images=5)[:10]
'The images'
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from string import Template

from medtemporal.errors import InvalidInputError, UnknownNameError


def strip_comments(text: str) -> str:
    """``text`` without its leading ``##`` comment lines (a template's header: where its wording comes from).

    >>> strip_comments("## Source: figure 5\\nDescribe $x.")
    'Describe $x.'
    """
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("##"):
        lines.pop(0)
    return "".join(lines)


def available() -> list[str]:
    """Names of the built-in templates."""
    return sorted(p.name[:-4] for p in resources.files(__package__).iterdir() if p.name.endswith(".txt"))


class PromptSet:
    """The built-in templates, with optional replacements read from files."""

    def __init__(self, overrides: dict[str, str | Path] | None = None) -> None:
        self._text: dict[str, str] = {}
        for name, path in (overrides or {}).items():
            if name not in available():
                raise UnknownNameError(f"Unknown prompt {name!r}; available: {', '.join(available())}.")
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
            self._text[name] = text

    def text(self, name: str) -> str:
        """The raw template ``name``."""
        if name not in self._text:
            if name not in available():
                raise UnknownNameError(f"Unknown prompt {name!r}; available: {', '.join(available())}.")
            self._text[name] = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
        return strip_comments(self._text[name])

    def render(self, name: str, **values: object) -> str:
        """Fill template ``name``; a missing value names the placeholder."""
        try:
            return Template(self.text(name)).substitute(values).strip()
        except KeyError as exc:
            raise InvalidInputError(f"Prompt {name!r} needs a value for ${exc.args[0]}; fix the template.") from None
        except ValueError:  # a stray `$`
            line = _stray_dollar_line(self.text(name))
            raise InvalidInputError(
                f"Prompt {name!r} has a `$` that starts no placeholder (line {line}); write $$ for a literal dollar."
            ) from None

    def hash(self, name: str) -> str:
        """sha256 (first 16 hex digits) of template ``name`` as used."""
        return hashlib.sha256(self.text(name).encode("utf-8")).hexdigest()[:16]


def _stray_dollar_line(text: str) -> int:
    """The 1-based line of the first ``$`` in ``text`` that `string.Template` cannot read (0 when none)."""
    for match in Template.pattern.finditer(text):
        if match.group("invalid") is not None:
            return text.count("\n", 0, match.start("invalid")) + 1
    return 0
