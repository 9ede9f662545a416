import importlib.util

import pytest

from medtemporal.backends import load
from medtemporal.errors import InvalidInputError, MissingDependencyError


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_without_the_package_names_the_pip_command():
    with pytest.raises(MissingDependencyError, match=r"pip install 'medtemporal\[vllm\]'"):
        load("vllm:/models/Qwen2.5-VL-7B-Instruct")


def test_vllm_options_are_checked_before_anything_is_imported():
    with pytest.raises(InvalidInputError, match="no option temperature"):
        load("vllm:/models/x", temperature=0.5)
