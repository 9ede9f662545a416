"""Headless Chromium (the Debian ``chromium`` package) for checking report pages in a real browser.

Install once with ``apt-get install -y --no-install-recommends chromium`` (root); tests that need it skip,
saying so, where it is not installed.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

INSTALL = "apt-get install -y --no-install-recommends chromium"


def chromium() -> str:
    """The Chromium executable, or skip the test naming the command that installs it."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(f"headless Chromium is not installed; install it with `{INSTALL}` to check report pages")


def headless(page: Path | str, *flags: str, fragment: str = "", timeout: float = 90,
             budget_ms: int = 3000) -> subprocess.CompletedProcess[str]:
    """Open ``page`` (a file, or a URL) (with ``#fragment``) in headless Chromium with ``flags``, ``budget_ms`` of
    virtual time for its scripts and loads; console messages go to stderr."""
    url = (page if isinstance(page, str) else page.resolve().as_uri()) + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory() as profile:
        command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
                   "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={profile}", "--v=0", f"--virtual-time-budget={budget_ms}", *flags, url]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


LAYOUT_JS = r"""
(function(){
function scroller(el){for(let e=el.parentElement;e&&e!==document.body;e=e.parentElement){
 const o=getComputedStyle(e).overflowX;if(o==='auto'||o==='scroll')return e;}return null;}
function measure(){
 const vw=document.documentElement.clientWidth,right=Math.min(vw,document.body.getBoundingClientRect().right)+1;
 const tables=[...document.querySelectorAll('table')].map(t=>{const s=scroller(t),first=t.querySelector('tbody td');
  return {where:(t.closest('[id]')||{}).id||'',scrolls:!!s,fits:t.getBoundingClientRect().right<=right,
   top:t.getBoundingClientRect().top+window.scrollY,
   scrollerFits:s?s.getBoundingClientRect().right<=right:null,
   sticky:first?getComputedStyle(first).position==='sticky':null,
   headline:(h=>h?h.getBoundingClientRect().left>=0&&h.getBoundingClientRect().right<=right:null)(
    t.querySelector('tbody td.headline'))};});
 const images=[...document.images].map(i=>({src:(i.getAttribute('src')||'').slice(0,80),
  loaded:i.complete&&i.naturalWidth>0,detail:!!i.closest('#vdetail')}));
 const figures=[...document.querySelectorAll('figure')].filter(f=>!f.closest('#viewer')).map(f=>{const i=f.querySelector('img');
  return {id:f.id,src:i.getAttribute('src'),minFontPx:i.dataset.minFontPx?+i.dataset.minFontPx:null,
   scale:i.naturalWidth?i.clientWidth/i.naturalWidth:null};});
 return {pageOverflow:document.documentElement.scrollWidth-vw,tables,images,figures,
  ids:[...document.querySelectorAll('[id]')].map(e=>e.id),
  firstH2:(document.querySelector('h2')||{}).id||'',text:document.body.innerText,
  notFound:[...document.querySelectorAll('#vdetail .chip')].some(c=>c.textContent.startsWith('(image not found)')),
  count:(document.getElementById('vcount')||{}).textContent||null,
  detail:(document.getElementById('vdetail')||{}).textContent||''};}
let tries=0;
function wait(){const d=document.getElementById('vdetail');
 const busy=(d&&d.textContent.startsWith('Loading'))||[...document.images].some(i=>!i.complete);
 if(busy&&tries++<150){setTimeout(wait,100);return;}
 const pre=document.createElement('pre');pre.id='mt-layout';pre.textContent=JSON.stringify(measure());
 document.body.appendChild(pre);}
window.addEventListener('load',()=>setTimeout(wait,300));
})();
"""
"""Measures a report page once its images and on-demand data have loaded: tables (scrolling or fitting, first column
sticky, top edge, its headline cell in view), images (loaded), figures (ids, sources, smallest text as shown), every element id, the first
section heading, the page's text, the viewer's state."""


def layout(page: Path, fragment: str = "", width: int = 1400) -> dict:
    """`LAYOUT_JS`'s measures of ``page`` opened at ``width`` px (a copy beside it runs the script, from a file
    beside it as the page's policy allows, so the page's relative ``assets/`` load as they do for the page itself)."""
    probe, script = page.with_name(".layout-" + page.name), page.with_name(".layout-probe.js")
    script.write_text(LAYOUT_JS, encoding="utf-8")
    probe.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", f'<script src="{script.name}"></script></body>', 1), encoding="utf-8")
    try:
        done = headless(probe, "--dump-dom", f"--window-size={width},1000", fragment=fragment, budget_ms=20000)
    finally:
        probe.unlink()
        script.unlink()
    match = re.search(r'<pre id="mt-layout">(.*?)</pre>', done.stdout, re.S)
    assert match, f"the page did not finish loading: {done.stderr[-2000:]}"
    return {**json.loads(html.unescape(match[1])), "console": console_messages(done.stderr)}


def console_messages(stderr: str) -> list[str]:
    """The page's console messages (errors and logs) in Chromium's stderr."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]
