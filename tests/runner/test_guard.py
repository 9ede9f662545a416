import json

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.errors import InvalidInputError
from medtemporal.runner import check_data_use, run


def test_credentialed_data_is_refused_for_remote_endpoints_in_one_sentence():
    with pytest.raises(InvalidInputError) as err:
        check_data_use("mi-cxr", "credentialed", "https://8.8.8.8/v1", allow_remote_data=False)
    message = str(err.value)
    assert message.count(". ") == 0 and message.endswith(".")
    assert "'mi-cxr'" in message and "https://8.8.8.8/v1" in message and "--allow-remote-data" in message


@pytest.mark.parametrize(
    "licence, endpoint, allow",
    [
        ("credentialed", "http://127.0.0.1:8000/v1", False),
        ("credentialed", "http://10.0.0.5:8000/v1", False),
        ("credentialed", None, False),  # in-process model
        ("credentialed", "https://8.8.8.8/v1", True),
        ("synthetic", "https://8.8.8.8/v1", False),
        ("open", "https://8.8.8.8/v1", False),
    ],
)
def test_everything_else_is_allowed(licence, endpoint, allow):
    check_data_use("mi-cxr", licence, endpoint, allow_remote_data=allow)


def test_a_run_of_credentialed_data_stops_before_anything_is_sent_or_written(tmp_path, monkeypatch):
    bench = make_tiny_benchmark(tmp_path, n=2, licence="credentialed")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    # 8.8.8.8 is only classified, never contacted: the guard refuses first
    with pytest.raises(InvalidInputError, match="Refusing to send benchmark 'tiny'"):
        run(bench, "openai+https://8.8.8.8/v1:gpt-4o", tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_the_flag_is_recorded_and_local_endpoints_need_none(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2, licence="credentialed")
    run(bench, fake.uri(), tmp_path / "local", progress=False)
    run(bench, fake.uri(), tmp_path / "flag", allow_remote_data=True, progress=False)
    flags = [json.loads((tmp_path / r / "config.json").read_text())["allow_remote_data"] for r in ("local", "flag")]
    assert flags == [False, True]
