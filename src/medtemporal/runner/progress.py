"""The live progress bar of a run: done/total, rate, ETA and errors, where a person watches
(`medtemporal.progress`: a terminal or a notebook; never CI or a pipe)."""

from __future__ import annotations

from medtemporal.progress import progress_bar


class Progress:
    """A tqdm bar over items (those already done count from the start).

    Args:
        total: items in the run.
        initial: items already done (resumed).
        desc: label (the model URI; long ones keep their end).
        enabled: False to silence it; it is also silent when no one watches (`medtemporal.progress.interactive`).
    """

    def __init__(self, total: int, initial: int, desc: str, enabled: bool = True) -> None:
        self.errors = 0
        self._bar = progress_bar(
            total=total,
            initial=initial,
            desc=desc if len(desc) <= 40 else "…" + desc[-39:],
            unit="item",
            dynamic_ncols=True,
            smoothing=0.05,
            disable=not enabled,
        )
        self._bar.set_postfix(errors=0, refresh=False)

    def advance(self, error: bool) -> None:
        """One more item finished (with an error or not)."""
        if error:
            self.errors += 1
            self._bar.set_postfix(errors=self.errors, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()
