import pytest
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.fake_openai import FakeOpenAI


@pytest.fixture(scope="session")
def server():
    with FakeOpenAI.start() as srv:
        yield srv


@pytest.fixture
def fake(server, monkeypatch, tmp_path):
    """The loopback server, reset; the API key in the environment; the response cache under tmp_path."""
    server.reset()
    server.configure(keep_bodies=False, hang_s=30, latency=0.0)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache" / "responses.sqlite"))
    return server


@pytest.fixture
def assert_no_key():
    """Check that the API key is in no file under a folder and in no captured output."""

    def check(root, captured=None):
        files = [p for p in root.rglob("*") if p.is_file()]
        assert files, f"nothing written under {root}"
        for path in files:
            assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
        if captured is not None:
            assert KEY not in captured.out and KEY not in captured.err
        return files

    return check
