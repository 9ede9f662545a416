"""The one path from a run's text to a page: names, outputs and item text as HTML text, Markdown rendered without
links or markup, data inside script elements, and the scripts a page may run.

Every text that comes from a run (a run's name, a model's output, an item's question, a family's Markdown
tables that hold them) reaches HTML through `html_text` or `markdown_html`; data a page's script reads is
inlined with `data_block` (or `script_json`), so that no text can close or open an element or a comment; and a
page's own scripts are written with `inline_script`, whose hashes `content_security_policy` allows: a page
served with that policy (or carrying it, `policy_meta`) runs no other inline script, no inline event handler and no ``javascript:`` URL.

>>> html_text('<b onclick="x()">R&D</b>')
'&lt;b onclick=&quot;x()&quot;&gt;R&amp;D&lt;/b&gt;'
>>> markdown_html("| Run |\\n|---|\\n| [details](javascript:alert(1)) |")
'<table>\\n<thead>\\n<tr>\\n<th>Run</th>\\n</tr>\\n</thead>\\n<tbody>\\n<tr>\\n<td>[details](javascript:alert(1))</td>\\n</tr>\\n</tbody>\\n</table>'
>>> script_json({"raw": "<!--<script></script>"})
'{"raw":"\\\\u003c!--\\\\u003cscript\\\\u003e\\\\u003c/script\\\\u003e"}'
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
from collections.abc import Callable
from typing import Any

import markdown as markdown_lib

UNSAFE_MARKDOWN = ("reference", "link", "image_link", "image_reference", "short_reference", "short_image_ref",
                   "autolink", "automail", "html")
"""Python-Markdown's inline patterns that make links, images or raw HTML: none is used on a run's text."""
_FIGURE_LINE = re.compile(r"^[ \t]*!\[([^\]\n]*)\]\(([^)\s]+)\)[ \t]*$", re.MULTILINE)
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")


def html_text(value: object) -> str:
    """``value`` as HTML text or an attribute value (``&``, ``<``, ``>`` and both quotes escaped)."""
    return html.escape(str(value), quote=True)


def markdown_html(text: str, figure: Callable[[str, str], str | None] | None = None) -> str:
    """Markdown (a family's tables and notes, which hold run names and outputs) as HTML, without links, images
    or raw HTML: ``[x](javascript:…)``, ``<script>`` and ``<http://…>`` stay text. A line that is only
    ``![ALT](NAME)`` becomes ``figure(ALT, NAME)``, the HTML of one of the family's own figures, where that
    gives one (None: the line stays text)."""
    token = secrets.token_hex(8)  # a placeholder no text can forge
    placed: dict[str, str] = {}

    def place(match: re.Match[str]) -> str:
        shown = figure(match.group(1), match.group(2)) if figure is not None else None
        if shown is None:
            return match.group(0)
        key = f"mtfigure{token}n{len(placed)}"
        placed[key] = shown
        return f"\n{key}\n"

    renderer = markdown_lib.Markdown(extensions=["tables"])
    for name in UNSAFE_MARKDOWN:
        renderer.inlinePatterns.deregister(name, strict=False)
    renderer.preprocessors.deregister("html_block", strict=False)
    out = renderer.convert(_FIGURE_LINE.sub(place, text))
    for key, figure in placed.items():
        out = out.replace(f"<p>{key}</p>", figure)
    return out


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a script element and as a JavaScript literal: ``<``, ``>``, ``&``,
    U+2028 and U+2029 written as escapes, so no text can end the element or open a comment or another one."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text)


def data_block(element_id: str, value: Any) -> str:
    """A JSON data block a page's script reads (``JSON.parse(document.getElementById(id).textContent)``): never
    run, and encoded with `script_json`."""
    return f'<script type="application/json" id="{html_text(element_id)}">{script_json(value)}</script>'


_ALLOWED: dict[str, None] = {}


def inline_script(code: str) -> str:
    """A script element of the page's own ``code`` (fixed text, never data: see `data_block`), whose hash
    `content_security_policy` then allows."""
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode("ascii")
    _ALLOWED[f"'sha256-{digest}'"] = None
    return f"<script>{code}</script>"


def content_security_policy(*, meta: bool = False) -> str:
    """The policy pages are served with: scripts from the page's own origin and the inline scripts written by
    `inline_script` only (no inline event handler, no ``javascript:`` URL), images from the origin or inline,
    nothing framed, posted or loaded from elsewhere. ``meta``: the policy a page carries itself (`policy_meta`),
    without ``frame-ancestors``, which only a header can set."""
    scripts = " ".join(["'self'", *_ALLOWED])
    return (f"default-src 'none'; script-src {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'" + ("" if meta else "; frame-ancestors 'none'"))


def policy_meta() -> str:
    """The policy as a ``<meta>`` element for a page's head, written after its scripts (`inline_script`): the page
    keeps it opened from disk too."""
    return f'<meta http-equiv="Content-Security-Policy" content="{html_text(content_security_policy(meta=True))}">'
