import pytest

from medtemporal.errors import UnknownNameError
from medtemporal.registry import lookup, names, register


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UnknownNameError, match=r"Did you mean 'direct'\?.*Available:"):
        lookup("protocol", "dirct")


def test_duplicate_name_is_refused():
    @register("metric", "test_dup_metric", higher_is_better=True)
    def first(): ...

    with pytest.raises(ValueError, match="already registered"):

        @register("metric", "test_dup_metric")
        def second(): ...


def test_metadata_is_kept_and_listed():
    @register("metric", "test_meta_metric", higher_is_better=False)
    def metric(): ...

    assert lookup("metric", "test_meta_metric").info == {"higher_is_better": False}
    assert "test_meta_metric" in names("metric")


def test_unknown_kind():
    with pytest.raises(ValueError, match="Unknown registry kind"):
        register("widget", "x")  # type: ignore[arg-type]
