import sqlite3
import threading

import pytest
from PIL import Image

from medtemporal.backends.base import (
    GenerateConfig,
    ImagePart,
    Message,
    Request,
    Response,
    TextPart,
)
from medtemporal.backends.cache import ResponseCache, default_cache_path, request_key

IDENTITY = {"uri": "openai+http://127.0.0.1:1/v1:m", "max_pixels": 100}


def _request(image, text="Which?", config=GenerateConfig(), choices=("A", "B"), answer_format="{}"):
    parts = (TextPart("T1:"), ImagePart(image), TextPart(text))
    return Request((Message("user", parts),), config, choices, "s", answer_format)


def test_keys_follow_image_content_not_path(tmp_path):
    a = tmp_path / "a.png"
    Image.new("L", (4, 4), 10).save(a)
    copy = tmp_path / "elsewhere" / "b.png"
    copy.parent.mkdir()
    copy.write_bytes(a.read_bytes())
    other = tmp_path / "c.png"
    Image.new("L", (4, 4), 200).save(other)
    key = request_key(IDENTITY, _request(a))
    assert len(key) == 32 and key == request_key(IDENTITY, _request(copy))
    assert key != request_key(IDENTITY, _request(other))


def test_keys_change_with_identity_settings_text_answer_space_and_format(tmp_path):
    a = tmp_path / "a.png"
    Image.new("L", (4, 4), 10).save(a)
    key = request_key(IDENTITY, _request(a))
    variants = [
        request_key({**IDENTITY, "max_pixels": 200}, _request(a)),
        request_key(IDENTITY, _request(a, config=GenerateConfig(max_tokens=5))),
        request_key(IDENTITY, _request(a, config=GenerateConfig(system_prompt="Be brief."))),
        request_key(IDENTITY, _request(a, text="Which one?")),
        request_key(IDENTITY, _request(a, choices=("A", "B", "C"))),
        request_key(IDENTITY, _request(a, answer_format="My answer is {}.")),
    ]
    assert len({key, *variants}) == 7


def test_responses_survive_reopening_and_are_shared_between_connections(tmp_path):
    path = tmp_path / "deep" / "cache.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k1", Response("B", 10, 2, "server-model"))
        assert cache.get("nope") is None
    other = ResponseCache(path)
    assert other.get("k1") == Response("B", 10, 2, "server-model")
    assert (other.hits, other.misses, len(other)) == (1, 0, 1)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other.put("k1", Response("C"))
    assert ResponseCache(path).get("k1").text == "C"


def test_cache_is_safe_from_threads(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")

    def writer(n):
        for i in range(50):
            cache.put(f"{n}-{i}", Response(str(i)))
            assert cache.get(f"{n}-{i}").text == str(i)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 200


def test_default_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("MEDTEMPORAL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "medtemporal" / "responses.sqlite"


def test_a_cache_that_cannot_be_written_is_not_called_damaged(tmp_path):
    """Issue 24: "database or disk is full" and a read-only database say what is wrong, never "delete it"."""
    from medtemporal.errors import InvalidInputError

    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("k0", Response("kept"))
        cache._db.execute("PRAGMA max_page_count = 1")  # the database may grow no more: SQLITE_FULL
        with pytest.raises(InvalidInputError, match="cannot be written: the disk is full") as err:
            cache.put("k1", Response("x" * 100_000))
        assert "damaged" not in str(err.value) and "delete" not in str(err.value)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache._db.execute("PRAGMA query_only = 1")  # as a read-only file answers writes: SQLITE_READONLY
        with pytest.raises(InvalidInputError, match="cannot be written: it or its folder is read-only"):
            cache.put("k2", Response("y"))
        assert cache.get("k0").text == "kept"  # nothing in it is lost


@pytest.mark.parametrize("no_cache", [False, True])
def test_twin_requests_in_flight_are_asked_once_unless_the_cache_is_off(tmp_path, no_cache):
    from helpers.fake_openai import FakeOpenAI
    from medtemporal.backends.session import DataUse, complete

    def ask(text):
        return Request((Message("user", (TextPart(text),)),), GenerateConfig(max_tokens=8))

    requests = [ask("one"), ask("two"), ask("one"), ask("one"), ask("two"), ask("three")]
    with FakeOpenAI.start(latency=0.3) as server:
        texts = complete(server.uri(), requests, use=DataUse("tiny", "synthetic"), desc="twins", concurrency=6,
                         cache_path=tmp_path / "c.sqlite", no_cache=no_cache)
        counts = server.stats()["counts"]
    assert texts[0] == texts[2] == texts[3] and texts[1] == texts[4] and all(texts)
    assert counts == ({"one": 3, "two": 2, "three": 1} if no_cache else {"one": 1, "two": 1, "three": 1})


def test_a_failed_request_fails_its_twins_in_flight_and_is_asked_again_next_time(tmp_path):
    from helpers.fake_openai import FakeOpenAI
    from medtemporal.backends.base import RequestError
    from medtemporal.backends.session import DataUse, complete

    request = Request((Message("user", (TextPart("bad"),)),), GenerateConfig(max_tokens=8))
    use, cache = DataUse("tiny", "synthetic"), tmp_path / "c.sqlite"
    with FakeOpenAI.start(latency=0.3, faults=[{"kind": "400", "match": "bad", "times": 1}]) as server:
        with pytest.raises(RequestError):
            complete(server.uri(), [request] * 3, use=use, desc="twins", concurrency=3, cache_path=cache)
        assert server.stats()["counts"] == {"bad": 1}
        assert complete(server.uri(), [request], use=use, desc="again", cache_path=cache)[0]
        assert server.stats()["counts"] == {"bad": 2}
