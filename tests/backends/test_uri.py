import pytest

from medtemporal.backends import load
from medtemporal.backends.uri import is_local_endpoint, split_endpoint, split_scheme
from medtemporal.errors import InvalidInputError, UnknownNameError


@pytest.mark.parametrize(
    "uri, base_url, model",
    [
        ("openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct", "http://localhost:8000/v1",
         "Qwen/Qwen2.5-VL-7B-Instruct"),
        ("openai+http://localhost:11434/v1:llama3.2-vision:11b", "http://localhost:11434/v1", "llama3.2-vision:11b"),
        ("openai+http://localhost:llava:7b", "http://localhost", "llava:7b"),
        ("openai+http://127.0.0.1:8000:org/model:tag", "http://127.0.0.1:8000", "org/model:tag"),
        ("openai+https://api.example.org/v1:gpt-4o", "https://api.example.org/v1", "gpt-4o"),
        ("openai+http://[::1]:8000/v1:m", "http://[::1]:8000/v1", "m"),
        ("openai+http://gpu-box:30000/deep/path/v1:a/b/c", "http://gpu-box:30000/deep/path/v1", "a/b/c"),
    ],
)
def test_endpoint_uri_splits_on_the_first_colon_after_port_and_path(uri, base_url, model):
    assert split_endpoint(uri) == (base_url, model)


@pytest.mark.parametrize(
    "uri",
    [
        "openai+http://localhost:8000",  # the port is never a model name
        "openai+http://localhost:8000/v1",
        "openai+http://localhost:8000/v1:",
        "openai+ftp://localhost:8000/v1:m",
        "openai+http://localhost:80x0/v1:m",
    ],
)
def test_endpoint_uri_without_a_model_is_refused_with_the_expected_form(uri):
    with pytest.raises(InvalidInputError, match="HOST:PORT/PATH:MODEL"):
        split_endpoint(uri)


def test_scheme_is_text_before_the_first_colon():
    assert split_scheme("hf:/models/a:b") == ("hf", "/models/a:b")
    assert split_scheme("openai+http://h:1/v1:m") == ("openai+http", "//h:1/v1:m")
    with pytest.raises(InvalidInputError, match="SCHEME:TARGET"):
        split_scheme("gpt-4o")


def test_unknown_scheme_suggests_the_close_one():
    with pytest.raises(UnknownNameError, match="Did you mean 'openai'") as err:
        load("opneai:gpt-4o")
    assert "baseline" in str(err.value)


def test_options_a_backend_does_not_take_are_refused_but_run_options_are_ignored():
    assert load("baseline:random", max_pixels=100, api_key_env="X", timeout_s=3).uri == "baseline:random"
    with pytest.raises(InvalidInputError, match="no option dtype"):
        load("baseline:random", dtype="bfloat16")


@pytest.mark.parametrize(
    "url, local",
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.8.9.10/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.1.2.3:8000/v1", False),
        ("http://192.168.0.7/v1", False),
        ("http://172.20.0.2/v1", False),
        ("http://169.254.1.1/v1", False),
        ("https://8.8.8.8/v1", False),
        ("https://[2001:4860:4860::8888]/v1", False),
        ("http://172.32.0.1/v1", False),
    ],
)
def test_local_endpoints_are_loopback_only_by_default(url, local):
    assert is_local_endpoint(url) is local


# --- issue 24: one parse of the base URL, by the standard library's rules -------------------------------------------

@pytest.mark.parametrize("host, needle", [
    ("0177.0.0.1", "dotted decimal"),  # octal to inet_aton, refused by httpx: the guard and the client disagreed
    ("127.1", "dotted decimal"),
    ("0x7f.0.0.1", "dotted decimal"),
    ("ｐｕｂｌｉｃ.test", "not plain ASCII"),  # fullwidth letters
    ("ⓛocalhost", "not plain ASCII"),
    ("local_host!", "not a host name"),
])
def test_hosts_that_clients_read_differently_are_refused_in_one_sentence(host, needle):
    from medtemporal.backends.uri import parse_base_url

    with pytest.raises(InvalidInputError, match=needle) as err:
        split_endpoint(f"openai+http://{host}:8000/v1:m")
    assert "Traceback" not in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InvalidInputError, match="OPENAI_BASE_URL"):
        parse_base_url(f"http://{host}:8000/v1", "OPENAI_BASE_URL")


@pytest.mark.parametrize("url", [
    "http://public.test#@127.0.0.1:18600/v1",  # the guard read public.test, the client 127.0.0.1 (or the reverse)
    "http://127.0.0.1:18600/v1#frag",
    "http://127.0.0.1:18600/v1?x=1",
    "http://u:ab/cd@127.0.0.1:18600/v1",  # a '/' in the password: by the URL rules the host is u
])
def test_a_base_url_with_a_fragment_query_or_a_path_holding_an_at_sign_is_refused(url):
    from medtemporal.backends.uri import parse_base_url

    with pytest.raises(InvalidInputError) as err:
        parse_base_url(url, "OPENAI_BASE_URL")
    assert "cd" not in str(err.value).replace("credentials", "")  # the password is never shown


def test_user_information_ends_at_the_last_at_sign_of_the_authority():
    from medtemporal.backends.uri import parse_base_url, redact

    base = parse_base_url("http://u:abc@sk-S@127.0.0.1:18001/v1/", "here")
    assert (base.url, base.host, base.username, base.password) == ("http://127.0.0.1:18001/v1", "127.0.0.1", "u",
                                                                  "abc@sk-S")
    assert base.shown == "http://***@127.0.0.1:18001/v1" and base.basic_auth == "Basic dTphYmNAc2stUw=="
    assert redact("see http://u:abc@sk-S@127.0.0.1:18001/v1 now") == "see http://***@127.0.0.1:18001/v1 now"
    assert redact("openai+http://h:8000/v1:claude@2024") == "openai+http://h:8000/v1:claude@2024"
    encoded = parse_base_url("http://u:p%40ss%2Fw@[::1]:8000/v1", "here")
    assert (encoded.password, encoded.host, encoded.url) == ("p@ss/w", "::1", "http://[::1]:8000/v1")
