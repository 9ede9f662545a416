"""Progress bars where a person watches: on a terminal, and in a Jupyter notebook; never in CI or into a pipe.

In a notebook (a kernel runs us) the bar is `tqdm.auto`'s: the widget where ipywidgets is installed, else the
text bar; on a terminal tqdm's text bar on stderr. With a ``CI`` variable set, or stderr a pipe or a file, the
bar is silent, so logs hold no carriage-return noise.

>>> bar = progress_bar(range(3), desc="reading")   # silent here: doctests run off a terminal
>>> sum(bar)
3
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm as text_bar


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's kernel shell; a terminal IPython has no ``kernel``)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def interactive() -> bool:
    """True when a person watches: stderr is a terminal or a notebook kernel runs us, and no ``CI`` variable is set."""
    return not os.environ.get("CI") and (sys.stderr.isatty() or in_notebook())


def progress_bar(iterable: Iterable[Any] | None = None, **options: Any) -> Any:
    """A tqdm bar over ``iterable`` (``options`` as tqdm's), shown only when `interactive` and not ``disable``d."""
    if not interactive():
        options["disable"] = True
    elif in_notebook():
        from tqdm.auto import (
            tqdm as auto_bar,  # the widget where ipywidgets is installed, else the text bar
        )

        return auto_bar(iterable, **options)
    return text_bar(iterable, **options)
