"""Progress bars where a person watches — a terminal, a Jupyter kernel (notebook runs, ``mt.evaluate``) — and
never in CI or into a pipe; ``build`` shows its readers' progress likewise."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from helpers.tiny import make_tiny_benchmark

import medtemporal as mt
from medtemporal.cli import main
from medtemporal.phantoms.chexpert_plus import write_chexpert_plus
from medtemporal.progress import in_notebook, interactive, progress_bar


class _Shell:
    """An IPython shell: a notebook's has a kernel, a terminal's has none."""

    def __init__(self, kernel: object | None) -> None:
        self.kernel = kernel


def _terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr (as captured now) is a terminal; no CI variable."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


def _ipython(monkeypatch: pytest.MonkeyPatch, shell: _Shell | None) -> None:
    module = types.ModuleType("IPython")
    module.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", module)


def test_no_bar_into_a_pipe_or_in_ci(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert not sys.stderr.isatty() and not interactive()
    assert sum(progress_bar(range(5), desc="reading")) == 10
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("CI", "true")
    assert not interactive()
    list(progress_bar(range(5), desc="reading"))
    assert capsys.readouterr().err == ""


def test_a_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _terminal(monkeypatch)
    assert interactive() and not in_notebook()
    list(progress_bar(range(5), desc="reading", unit="row"))
    assert "reading: 100%" in capsys.readouterr().err


def test_a_notebook_kernel_is_detected_a_terminal_ipython_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    _ipython(monkeypatch, _Shell(kernel=None))
    assert not in_notebook() and not interactive()
    _ipython(monkeypatch, _Shell(kernel=object()))
    assert in_notebook() and interactive()  # stderr is no terminal in a kernel, and the bar shows all the same
    monkeypatch.setenv("CI", "1")
    assert not interactive()


def test_evaluate_in_a_notebook_shows_the_run_bar_and_progress_false_hides_it(
        tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CI", raising=False)
    _ipython(monkeypatch, _Shell(kernel=object()))
    bench = make_tiny_benchmark(tmp_path, n=4)
    mt.evaluate(bench, "baseline:constant-A", out=tmp_path / "a", no_cache=True)
    err = capsys.readouterr().err
    assert "baseline:constant-A: 100%" in err and "4/4" in err
    mt.evaluate(bench, "baseline:constant-A", out=tmp_path / "b", no_cache=True, progress=False)
    assert "100%" not in capsys.readouterr().err


def test_build_shows_reading_progress_on_a_terminal_only(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "cxp"
    write_chexpert_plus(data, patients=30, seed=1, image_size=32)
    args = ["build", "temmed", "--chexpert-plus", str(data), "--vqa-items", "10", "--no-audit"]
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "quiet")]) == 0
    assert "CheXpert Plus patients" not in capsys.readouterr().err
    _terminal(monkeypatch)
    assert main([*args, "--out", str(tmp_path / "shown")]) == 0
    assert "CheXpert Plus patients" in capsys.readouterr().err


def test_a_real_notebook_kernel_shows_the_tqdm_auto_bar(tmp_path, monkeypatch) -> None:
    """Through a real Jupyter kernel (the dev extra installs one), as a person's notebook: no ``CI`` variable."""
    monkeypatch.delenv("CI", raising=False)  # the kernel inherits this process's environment
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("ipywidgets")
    bench = make_tiny_benchmark(tmp_path, n=4)
    nb = nbformat.v4.new_notebook()
    tests = str(Path(__file__).parent)
    nb.cells = [nbformat.v4.new_code_cell(
        f"import sys\nsys.path.insert(0, {tests!r})\nimport helpers.tiny\n"  # registers the tiny family
        f"import medtemporal as mt\nmt.evaluate({str(bench)!r}, 'baseline:constant-A', out={str(tmp_path / 'r')!r}, "
        "no_cache=True)")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    widgets = [o for o in nb.cells[0].outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets and "baseline:constant-A" in widgets[0]["data"]["text/plain"]
