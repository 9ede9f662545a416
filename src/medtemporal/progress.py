"""Progress bars where a person watches: on a terminal, and in a Jupyter notebook; never in CI or into a pipe.

In a notebook (a kernel runs us) the bar is `tqdm.auto`'s: the widget where ipywidgets is installed, else the
text bar; on a terminal tqdm's text bar on stderr. With a ``CI`` variable set, or stderr a pipe or a file, the
bar is silent, so logs hold no carriage-return noise. Inside `quiet` (``--no-progress``, ``progress=False``)
no bar shows at all: neither ours nor the Hugging Face libraries' (downloads, transformers' "Loading weights").

>>> bar = progress_bar(range(3), desc="reading")   # silent here: doctests run off a terminal
>>> sum(bar)
3
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


_QUIET: ContextVar[bool] = ContextVar("quiet", default=False)
LIBRARY_SWITCH = "HF_HUB_DISABLE_PROGRESS_BARS"
"""huggingface_hub's switch for its bars, which transformers follows when it is imported."""


@contextmanager
def quiet(enabled: bool = True) -> Iterator[None]:
    """Within the block no progress bar shows (with ``enabled``): ours, and those of huggingface_hub and
    transformers (their switches are set for the block, then put back)."""
    if not enabled:
        yield
        return
    token = _QUIET.set(True)
    before = os.environ.get(LIBRARY_SWITCH)
    os.environ[LIBRARY_SWITCH] = "1"  # libraries imported inside the block start silent
    switches = (("huggingface_hub.utils", "disable_progress_bars", "enable_progress_bars"),
                ("transformers.utils.logging", "disable_progress_bar", "enable_progress_bar"))
    loaded_before = {name for name, _, _ in switches if name in sys.modules}
    restore = []
    for name, off, on in switches:
        module = sys.modules.get(name)
        if module is not None:  # already imported: switched off, and on again after where it was on
            was_on = (not module.are_progress_bars_disabled() if name.startswith("huggingface")
                      else module.is_progress_bar_enabled())
            getattr(module, off)()
            if was_on:
                restore.append(getattr(module, on))
    try:
        yield
    finally:
        _QUIET.reset(token)
        if before is None:
            os.environ.pop(LIBRARY_SWITCH, None)
            hub = sys.modules.get("huggingface_hub.constants")
            if hub is not None and "huggingface_hub.utils" not in loaded_before:  # imported silent in the block
                for name in ("huggingface_hub.constants", "huggingface_hub.utils.tqdm"):  # the switch, and its copy
                    setattr(sys.modules.get(name, hub), "HF_HUB_DISABLE_PROGRESS_BARS", None)
                restore += [sys.modules["huggingface_hub.utils"].enable_progress_bars]
                if "transformers.utils.logging" in sys.modules and "transformers.utils.logging" not in loaded_before:
                    restore.append(sys.modules["transformers.utils.logging"].enable_progress_bar)
        else:
            os.environ[LIBRARY_SWITCH] = before
        for switch_on in restore:
            switch_on()


NO_PROGRESS_HELP = "show no progress bar (neither ours nor the libraries' download and loading bars)"


def add_no_progress(parser: Any) -> None:
    """Add ``--no-progress`` to a command's parser (or argument group); the CLI runs the command in `quiet`."""
    parser.add_argument("--no-progress", action="store_true", help=NO_PROGRESS_HELP)


def progress_bar(iterable: Iterable[Any] | None = None, **options: Any) -> Any:
    """A tqdm bar over ``iterable`` (``options`` as tqdm's), shown only when `interactive`, outside `quiet` and
    not ``disable``d."""
    if not interactive() or _QUIET.get():
        options["disable"] = True
    elif in_notebook():
        from tqdm.auto import (
            tqdm as auto_bar,  # the widget where ipywidgets is installed, else the text bar
        )

        return auto_bar(iterable, **options)
    return text_bar(iterable, **options)
