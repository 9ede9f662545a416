"""What an HTML report refers to besides its page: charts, thumbnails and viewer data, as files or inline.

A report folder holds ``report.html`` and ``assets/``: images by relative URL and
blocks of viewer data as small scripts (``assets/run-0-0.js``) that hand their
JSON to the page when it asks for them (`LOADER_JS` adds a ``<script src>`` tag on
first need). Script tags work where ``fetch`` does not, on pages opened from
``file://`` in Chromium, as well as on pages served by ``medtemporal view``.
With ``single_file`` everything is inline instead: images as data URIs, data
blocks as JSON data blocks the loader reads (never run, encoded by
`medtemporal.report.escaping.data_block`), one self-contained page.
"""

from __future__ import annotations

import base64
from typing import Any

from medtemporal.report.escaping import data_block, inline_script, script_json

ASSETS = "assets"
"""The folder beside ``report.html`` that holds its assets."""

LOADER_JS = r"""
window.mtData=window.mtData||{};window.mtWait=window.mtWait||{};
window.mtAsset=function(name,data){mtData[name]=data;(mtWait[name]||[]).forEach(w=>w[0](data));delete mtWait[name];};
window.mtNeed=function(name){return new Promise((ok,fail)=>{if(name in mtData)return ok(mtData[name]);
 const inline=document.getElementById('mt-asset-'+name);
 if(inline){mtData[name]=JSON.parse(inline.textContent);inline.remove();return ok(mtData[name]);}
 if(!mtWait[name]){mtWait[name]=[];const s=document.createElement('script');s.src='assets/'+name+'.js';
  s.onerror=()=>{(mtWait[name]||[]).forEach(w=>w[1](new Error('assets/'+name+'.js could not be loaded; keep the '+
   'assets folder beside report.html')));delete mtWait[name];};document.head.appendChild(s);}
 mtWait[name].push([ok,fail]);});};
"""
"""The page's loader: ``mtNeed(name)`` resolves with a data block, read from the page's inline JSON block
``mt-asset-<name>`` or loaded from ``assets/<name>.js``, once."""


class Assets:
    """The assets of one report page: files under ``assets/`` (by relative path), or inline (``single_file``)."""

    def __init__(self, single_file: bool = False) -> None:
        self.single_file = single_file
        self.files: dict[str, bytes] = {}
        """Path relative to the report folder (``assets/...``) → content."""
        self.inline: list[str] = []
        """Inline JSON data blocks of a single-file page."""

    def image(self, name: str, data: bytes, mime: str) -> str:
        """The ``src`` of an image: ``assets/<name>``, or a data URI on a single-file page."""
        if self.single_file:
            return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
        path = f"{ASSETS}/{name}"
        self.files[path] = data
        return path

    def data(self, name: str, value: Any) -> None:
        """A data block the page loads on demand with ``mtNeed(name)``."""
        if self.single_file:
            self.inline.append(data_block(f"mt-asset-{name}", value))
        else:
            self.files[f"{ASSETS}/{name}.js"] = f"mtAsset({script_json(name)},{script_json(value)});".encode("utf-8")

    def scripts(self) -> str:
        """The loader and, on a single-file page, every data block (placed before the scripts that use them)."""
        return inline_script(LOADER_JS) + "".join(self.inline)
