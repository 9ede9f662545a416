"""The 3D-RAD section of ``medtemporal demo`` runs and ends in its report."""

from __future__ import annotations

from medtemporal.contract import spec
from medtemporal.cli import main


def test_demo_section_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    section = spec("3d-rad").demo(tmp_path, 6, 0)
    assert section.title == "3D-RAD"
    for argv in section.commands():
        assert main(argv) == 0, argv
    assert section.report.is_file()
    tables = (section.report.parent / "3d-rad_tables.md").read_text()
    assert "rad3d:history (reference)" in tables and "baseline:constant-B (reference)" in tables
