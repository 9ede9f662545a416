"""--tasks and --protocol-option: item selection, protocol options, and both in the run's identity."""

import json
from pathlib import Path

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import load, save
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.protocols.direct import Direct
from medtemporal.registry import register
from medtemporal.runner import run
from medtemporal.schema import Item


@register("protocol", "test-tagged", description="direct prompting that records a tag (tests only)")
class Tagged(Direct):
    """`Direct`, with one option (``tag``) that it records in every prediction's calls."""

    name = "test-tagged"

    def __init__(self, prompts=None, tag: str = "none") -> None:
        super().__init__(prompts)
        self.tag = tag

    async def solve(self, item, image_root, generate, config):
        solution = await super().solve(item, image_root, generate, config)
        solution.calls.append({"tag": self.tag})
        return solution


def _two_task_benchmark(root: Path, n: int = 6) -> Path:
    """The tiny benchmark with its odd items moved to task ICR (same images)."""
    bench = load(make_tiny_benchmark(root, n=n))
    items = [
        Item.create(**{**item.model_dump(exclude={"id"}), "task": "ICR"}) if k % 2 else item
        for k, item in enumerate(bench.items)
    ]
    return save(bench.path, items, bench.manifest)


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def test_tasks_select_items_and_are_recorded(tmp_path):
    bench = load(_two_task_benchmark(tmp_path))
    icr = {item.id for item in bench.items if item.task == "ICR"}
    summary = run(bench.path, "baseline:constant-A", tmp_path / "run", tasks=["ICR"], progress=False, score=False)
    assert (summary.total, summary.done) == (3, 3)
    assert {p["item_id"] for p in _lines(tmp_path / "run")} == icr
    assert json.loads((tmp_path / "run" / "config.json").read_text())["tasks"] == ["ICR"]
    # widening the selection resumes into the same folder and asks only for the new items
    wider = run(bench.path, "baseline:constant-A", tmp_path / "run", tasks=["ICR", "TEL"], progress=False, score=False)
    assert (wider.skipped_existing, wider.done) == (3, 3)


def test_an_unknown_task_is_one_sentence_naming_the_available_ones(tmp_path):
    bench = _two_task_benchmark(tmp_path)
    with pytest.raises(InvalidInputError) as err:
        run(bench, "baseline:random", tmp_path / "run", tasks=["TEL", "vqa"], progress=False)
    message = str(err.value)
    assert message == "The benchmark has no task 'vqa'; choose --tasks from ICR, TEL."
    assert not (tmp_path / "run").exists()


def test_cli_tasks_flag_and_runs_list_total(tmp_path, capsys):
    bench = _two_task_benchmark(tmp_path)
    out = tmp_path / "runs" / "icr"
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(out), "--tasks", " ICR ,"]) == 0
    assert "3 answered" in capsys.readouterr().out
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    assert "| 3/3 |" in capsys.readouterr().out  # the run's total counts only its tasks


def test_protocol_options_reach_the_protocol_and_are_recorded(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2)
    run(bench, "baseline:random", tmp_path / "run", protocol="test-tagged", protocol_options={"tag": "x"},
        progress=False)
    assert all(p["calls"][-1] == {"tag": "x"} for p in _lines(tmp_path / "run"))
    protocol = json.loads((tmp_path / "run" / "config.json").read_text())["protocol"]
    assert protocol["name"] == "test-tagged" and protocol["options"] == {"tag": "x"}


def test_a_changed_protocol_option_refuses_to_resume_and_loses_nothing(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=3)
    run(bench, "baseline:random", tmp_path / "run", protocol="test-tagged", protocol_options={"tag": "x"},
        limit=2, progress=False)
    before = (tmp_path / "run" / "predictions.jsonl").read_bytes()
    with pytest.raises(InvalidInputError, match="another protocol.options .*choose a new --out folder"):
        run(bench, "baseline:random", tmp_path / "run", protocol="test-tagged", protocol_options={"tag": "y"},
            progress=False)
    assert (tmp_path / "run" / "predictions.jsonl").read_bytes() == before
    again = run(bench, "baseline:random", tmp_path / "run", protocol="test-tagged", protocol_options={"tag": "x"},
                progress=False)
    assert (again.skipped_existing, again.done) == (2, 1)


def test_an_unknown_protocol_option_is_one_sentence_naming_the_options(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=1)
    with pytest.raises(InvalidInputError) as err:
        run(bench, "baseline:random", tmp_path / "r", protocol="test-tagged", protocol_options={"k": 3})
    assert str(err.value) == "Protocol 'test-tagged' has no option k; its options are: tag."
    with pytest.raises(InvalidInputError, match="Protocol 'direct' has no option k; its options are: none."):
        run(bench, "baseline:random", tmp_path / "r", protocol_options={"k": 3})
    assert not (tmp_path / "r").exists()


def test_cli_protocol_option_values_are_parsed(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=1)
    out = tmp_path / "r"
    args = ["run", str(bench), "--model", "baseline:random", "--out", str(out), "--protocol", "test-tagged"]
    assert main([*args, "--protocol-option", "tag=7"]) == 0
    assert json.loads((out / "config.json").read_text())["protocol"]["options"] == {"tag": 7}
    assert main([*args, "--protocol-option", "tag"]) == 2
    assert "--protocol-option 'tag' is not KEY=VALUE" in capsys.readouterr().err


def test_a_folder_without_predictions_takes_new_settings(tmp_path):
    bench = make_tiny_benchmark(tmp_path)
    bad = tmp_path / "bad.txt"
    bad.write_text("$question $options $nonsense")
    with pytest.raises(InvalidInputError, match=r"\$nonsense"):
        run(bench, "baseline:random", tmp_path / "r", prompts=PromptSet({"mcq_direct": bad}), progress=False)
    summary = run(bench, "baseline:random", tmp_path / "r", progress=False)  # fixed prompt: same folder
    assert summary.done == 3
