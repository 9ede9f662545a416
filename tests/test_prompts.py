import re
from pathlib import Path

import pytest

from medtemporal import prompts
from medtemporal.contract import spec
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError, UnknownNameError
from medtemporal.prompts import PromptSet, available, prompt_folder, required_fields

HASHES_BEFORE = {
    "caption_image": "1f8b0a7967d79483", "caption_summary": "c4bc489460ebfb9a", "caption_then_reason": "3abe39991ccb5ac6",
    "eltlm_direct": "4266bba4eb83d87f", "eltlm_question_wording": "fb139b78e4f271ee", "llm_judge": "b6d73bf9a12ec3e8",
    "llm_judge_system": "3cc926c7749f1053", "mcq_direct": "7a920330031dd92b", "micxr_error_type": "09c7eb5375cbae23",
    "mi_cxr_global_summary_correct": "02f02551525a1583", "mi_cxr_global_summary_incorrect": "bf18e22b39d1f45d",
    "mi_cxr_icr_variant_distractors": "cb5642e50a4adf16", "mi_cxr_interval_summary_correct": "4aaedc4216197eed",
    "mi_cxr_interval_summary_incorrect": "2f98028147b22e95", "rad3d_closed": "e3f0827a5896ec47",
    "rad3d_open": "f3b02a8227889e6a", "rad3d_qa_generate": "b69a8c676cc6bc80", "rad3d_qa_score": "a00a756065f1d06b",
    "shuffled_timestamps": "17462f68971613a5", "skillqa_order": "e188e44e0be0ca23", "stagewise_decide": "4517ab090febe557",
    "stagewise_describe": "f9f9b53e4745927b", "mi_cxr_stagewise_guideline_gts": "3d115122ffdc2f1e",
    "mi_cxr_stagewise_guideline_icr": "17fbc8a30c6ae50c", "mi_cxr_stagewise_guideline_tel": "ee6382522409a1c9",
    "temmed_pair": "4c6c181288d73371", "temmed_rag_mm_pair": "a496940a97fcfbb1", "temmed_rag_mm_report": "35a43ab97295428d",
    "temmed_rag_mm_vqa": "615fd9b16630370e", "temmed_rag_reference": "e55747d6150abd35",
    "temmed_rag_text_pair": "a496940a97fcfbb1", "temmed_rag_text_report": "3f8b93e30ec6ed28",
    "temmed_rag_text_vqa": "e449e33fc99e6e49", "temmed_report": "281edd011fe1cb31", "temmed_vqa": "ee10edc582bd0df8",
    "temmed_vqa_rephrase": "387f6a7df86fd65d", "timestamps": "389253043d004eca", "timestamps_system": "5887a1c34a3bb8e1",
}
"""`PromptSet().hash` of every template on main 21ae791, when all 38 sat in core ``prompts/``: the hashes runs record.
One changed on purpose since: ``timestamps`` is now ELTLM's Table 5 word for word, example lines included (issue 21 §3),
and its closing "Output example (only JSON):" lines too (issue 30 §3).
MI-CXR's wording and guideline templates carry the family's slug since (``mi_cxr_``, issue 28), their texts unchanged;
the judges' templates (``micxr_error_type``, ``llm_judge``) keep their names, which the judges' identities record."""

FAMILY_PREFIXES = {"mi_cxr_": "mi-cxr", "micxr_error_type": "mi-cxr", "temmed_": "temmed", "rad3d_": "3d-rad",
                   "skillqa_": "skillqa", "eltlm_": "eltlm", "llm_judge": "eltlm"}


def test_every_template_keeps_its_name_and_hash_after_moving_home():
    assert set(HASHES_BEFORE) <= set(available())
    assert {name: PromptSet().hash(name) for name in HASHES_BEFORE} == HASHES_BEFORE


def test_family_templates_live_in_their_family_folder_and_core_holds_only_generic_ones():
    found = prompts.templates()
    core = Path(prompts.__file__).parent
    for name in HASHES_BEFORE:
        owner = next((family for prefix, family in FAMILY_PREFIXES.items() if name.startswith(prefix)), "core")
        assert found[name].owner == owner, name
        expected = core if owner == "core" else prompt_folder(spec(owner))
        assert found[name].path == expected / f"{name}.txt"
    assert not [p.name for p in core.glob("*.txt") if p.name.startswith(tuple(FAMILY_PREFIXES))]


def test_medtemporal_list_shows_every_prompt_with_its_owner(capsys):
    assert main(["list", "prompt"]) == 0
    out = capsys.readouterr().out
    for name in HASHES_BEFORE:
        assert re.search(rf"^  {name}\s+\S", out, re.M), name
    assert re.search(r"^  micxr_error_type\s+mi-cxr$", out, re.M) and re.search(r"^  mcq_direct\s+core$", out, re.M)


def test_every_builtin_template_renders_with_its_placeholders():
    for name in available():
        ids = prompts.placeholders(PromptSet().text(name))
        assert PromptSet().render(name, **{k: "x" for k in ids})


def test_override_from_file_changes_text_and_hash(tmp_path):
    custom = tmp_path / "mine.txt"
    custom.write_text("Q: $question\n$options\nAnswer:")  # $n_images may go: the images show how many there are
    default, mine = PromptSet(), PromptSet({"mcq_direct": custom})
    assert mine.render("mcq_direct", question="q", options="A. x") == "Q: q\nA. x\nAnswer:"
    assert mine.hash("mcq_direct") != default.hash("mcq_direct")


def test_a_family_template_can_be_replaced_too(tmp_path):
    custom = tmp_path / "vqa.txt"
    custom.write_text("## my wording\nAnswer Yes or No. $question")
    assert PromptSet({"temmed_vqa": custom}).render("temmed_vqa", question="Worse?") == "Answer Yes or No. Worse?"


def test_bad_overrides_and_missing_values(tmp_path):
    with pytest.raises(UnknownNameError, match="Unknown prompt"):
        PromptSet({"nope": tmp_path / "x.txt"})
    with pytest.raises(InvalidInputError, match="does not exist"):
        PromptSet({"mcq_direct": tmp_path / "missing.txt"})
    with pytest.raises(InvalidInputError, match=r"needs a value for \$options"):
        PromptSet().render("mcq_direct", question="q", n_images=5)


def test_an_unknown_prompt_name_says_so_and_lists_the_available_ones():
    for call in (lambda: PromptSet().render("nope"), lambda: PromptSet().text("nope"), lambda: PromptSet().hash("nope")):
        with pytest.raises(UnknownNameError) as exc:
            call()
        assert str(exc.value) == f"Unknown prompt 'nope'; available: {', '.join(available())}."


def test_an_unknown_prompt_name_on_the_command_line_is_one_sentence(tmp_path, capsys):
    from helpers.tiny import make_tiny_benchmark

    bench = make_tiny_benchmark(tmp_path)
    (tmp_path / "p.txt").write_text("$question $options")
    args = ["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r"), "--no-progress"]
    assert main([*args, "--prompt", f"nope={tmp_path / 'p.txt'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("medtemporal: error: Unknown prompt 'nope'; available: caption_image, ") and "\n" not in err
    assert "needs a value" not in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize(("name", "text", "missing", "required"), [
    ("mcq_direct", "Pick one.\n$options\nOne letter.", "$question", "$options and $question"),
    ("mcq_direct", "## $question in the header is not sent\nPick one.", "$options and $question",
     "$options and $question"),
    ("temmed_rag_mm_vqa", "$references_intro $references $examples $question", "$images",
     "$examples, $images, $question, $references and $references_intro"),
])
def test_a_replacement_without_a_required_placeholder_is_refused_listing_them(tmp_path, name, text, missing, required):
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(InvalidInputError) as exc:
        PromptSet({name: path})
    assert str(exc.value) == (f"Prompt file {path} for {name!r} lacks {missing}, so the model would never see "
                              f"{'it' if ' and ' not in missing else 'them'}; a replacement of {name!r} must use "
                              f"{required}.")
    assert required_fields(name) == {f.strip("$") for f in re.split(r", | and ", required)}


def test_a_replacement_without_a_required_placeholder_is_refused_by_run(tmp_path, capsys):
    from helpers.tiny import make_tiny_benchmark

    bench = make_tiny_benchmark(tmp_path)
    (tmp_path / "p.txt").write_text("Which interval?\n$options\n")
    args = ["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r"), "--no-progress"]
    assert main([*args, "--prompt", f"mcq_direct={tmp_path / 'p.txt'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "lacks $question" in err and "must use $options and $question" in err and "\n" not in err
    assert not (tmp_path / "r").exists()


def test_a_fresh_process_finds_every_template_without_importing_the_families():
    """Run start-up hashes its templates: the listing comes from each family's package folder, no family imported,
    and is the same listing a process that imported every family gives."""
    import subprocess
    import sys

    code = ("import sys; from medtemporal import prompts; from medtemporal.benchmarks import FAMILIES; "
            "found = prompts.templates(); "
            "print(sum(m in sys.modules for m in FAMILIES.values())); "
            "print(sorted((n, s.owner, str(s.path)) for n, s in found.items()))")
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    imported, listing = fresh.splitlines()
    [spec(name) for name in ("mi-cxr", "temmed", "skillqa", "eltlm", "3d-rad")]  # this process: families imported
    assert imported == "0"
    assert listing == str(sorted((n, s.owner, str(s.path)) for n, s in prompts.templates().items()))
