"""Headless Chromium (the Debian ``chromium`` package) for checking report pages in a real browser.

Install once with ``apt-get install -y --no-install-recommends chromium`` (root); tests that need it skip,
saying so, where it is not installed.
"""

from __future__ import annotations

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


def headless(page: Path, *flags: str, fragment: str = "", timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """Open ``page`` (with ``#fragment``) in headless Chromium with ``flags``; console messages go to stderr."""
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory() as profile:
        command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
                   "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={profile}", "--v=0", "--virtual-time-budget=3000", *flags, url]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def console_messages(stderr: str) -> list[str]:
    """The page's console messages (errors and logs) in Chromium's stderr."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]
