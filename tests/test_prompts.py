import pytest

from medtemporal.errors import InvalidInputError, UnknownNameError
from medtemporal.prompts import PromptSet, available


def test_every_builtin_template_renders_with_its_placeholders():
    from string import Template

    for name in available():
        text = PromptSet().text(name)
        ids = {m.group("named") or m.group("braced") for m in Template.pattern.finditer(text) if m.group("named") or m.group("braced")}
        assert PromptSet().render(name, **{k: "x" for k in ids})


def test_override_from_file_changes_text_and_hash(tmp_path):
    custom = tmp_path / "mine.txt"
    custom.write_text("Q: $question\n$options\nAnswer:")
    default, mine = PromptSet(), PromptSet({"mcq_direct": custom})
    assert mine.render("mcq_direct", question="q", options="A. x") == "Q: q\nA. x\nAnswer:"
    assert mine.hash("mcq_direct") != default.hash("mcq_direct")


def test_bad_overrides_and_missing_values(tmp_path):
    with pytest.raises(UnknownNameError, match="Unknown prompt"):
        PromptSet({"nope": tmp_path / "x.txt"})
    with pytest.raises(InvalidInputError, match="does not exist"):
        PromptSet({"mcq_direct": tmp_path / "missing.txt"})
    with pytest.raises(InvalidInputError, match=r"needs a value for \$options"):
        PromptSet().render("mcq_direct", question="q", n_images=5)
