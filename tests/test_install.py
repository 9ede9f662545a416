"""The install commands the Makefile would run choose torch's build for the machine (`make -n`, nothing run)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make (apt-get install make)")


def install_commands(tmp_path: Path, gpu: bool) -> str:
    """`make -n install`'s commands with PATH holding an `nvidia-smi` that finds a GPU, or none."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "make", "python3"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    if gpu:
        smi = bin_dir / "nvidia-smi"
        smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\n")
        smi.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in {"TORCH_INDEX", "MAKEFLAGS", "MFLAGS"}}
    env["PATH"] = str(bin_dir)
    return subprocess.run(["make", "-n", "-B", "install", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True).stdout


def torch_lines(commands: str) -> list[str]:
    return [line for line in commands.splitlines() if re.search(r"pip install .*\"torch==", line)]


def test_a_machine_without_a_gpu_installs_the_cpu_build(tmp_path: Path) -> None:
    commands = install_commands(tmp_path, gpu=False)
    assert any(f'--index-url "{CPU_INDEX}"' in line for line in torch_lines(commands)), commands
    # where that index is unreachable (our own machines), the default index, said in one line
    assert f"{CPU_INDEX} is unreachable; torch from the default index instead" in commands


def test_a_machine_with_a_gpu_installs_the_default_cuda_build(tmp_path: Path) -> None:
    commands = install_commands(tmp_path, gpu=True)
    assert torch_lines(commands) and CPU_INDEX not in commands, commands
