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


def test_a_third_party_family_registers_through_the_entry_point_group(tmp_path):
    """A package with a ``medtemporal`` entry point adds a benchmark: listed, buildable, exportable."""
    import subprocess
    import sys
    import textwrap

    pkg = tmp_path / "thirdparty_bench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        from pathlib import Path
        from medtemporal.family import BenchmarkSpec, Item, Manifest, Published, register

        def build(args):
            item = Item.create(benchmark="toy", task="t", subtype="s", images=[], question="Q?",
                               options={"A": "a", "B": "b"}, answer_type="choice", answer="A")
            return [item], Manifest(benchmark="toy", version="1", licence="open")

        def to_lines(bench, out: Path) -> int:
            out.write_text("".join(i.question + "\\n" for i in bench.items))
            return len(bench.items)

        SPEC = register("benchmark", "toy")(BenchmarkSpec(
            name="toy", version="1", licence="open", description="a third-party toy family",
            add_arguments=lambda p: None, build=build,
            published=Published(exports={"lines": to_lines})))
    '''))
    dist = tmp_path / "thirdparty_bench-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-bench\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[medtemporal]\ntoy = thirdparty_bench\n")
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from medtemporal.cli import main
        assert main(["build", "toy", "--out", {str(tmp_path / "b")!r}]) == 0
        assert main(["export", {str(tmp_path / "b")!r}, "--format", "lines", "--out", {str(tmp_path / "q.txt")!r}]) == 0
        assert main(["list"]) == 0
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "toy" in done.stdout
    assert (tmp_path / "q.txt").read_text() == "Q?\n"


def test_core_packages_never_import_a_family():
    """Only ``medtemporal.benchmarks`` (and the registry's list of built-in modules) may import a family package."""
    import ast
    from pathlib import Path

    import medtemporal

    root = Path(medtemporal.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if "benchmarks" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(root)}: {n}" for n in names if n.startswith("medtemporal.benchmarks")]
    assert offenders == []


def test_a_family_reports_through_the_one_context_and_reads_no_run_folder():
    """A family's modules import `medtemporal.report.family` alone from the report package, and none loads runs or
    outcomes itself (the core hands its report them, read once)."""
    import ast
    from pathlib import Path

    import medtemporal.benchmarks

    root = Path(medtemporal.benchmarks.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module, names = node.module or "", [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                module, names = "", [a.name for a in node.names]
            else:
                continue
            where = path.relative_to(root).as_posix()
            reports = [n for n in [module, *names] if n.startswith("medtemporal.report") and n != "medtemporal.report.family"]
            offenders += [f"{where}: imports {n}" for n in reports if n]
            offenders += [f"{where}: imports {n}" for n in names if n in ("load_runs", "load_outcomes")]
    assert offenders == []


def test_each_declared_family_registers_its_name_and_a_run_imports_its_own_family_only():
    """`benchmarks.FAMILIES` names each package by the benchmark it registers; looking one family up
    imports that package and no other family's (a fresh process: this one has imported them all)."""
    import subprocess
    import sys

    from medtemporal.benchmarks import FAMILIES

    assert set(FAMILIES) <= set(names("benchmark"))  # tests register more
    for name, module in FAMILIES.items():
        assert lookup("benchmark", name).obj.build.__module__.startswith(module)
    code = ("import sys; from medtemporal.contract import spec; spec('ms-cxr-t'); "
            "from medtemporal.benchmarks import FAMILIES; "
            "print(*sorted(name for name, module in FAMILIES.items() if module in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ms-cxr-t"]


def test_a_name_a_family_registers_is_found_before_its_family_is_looked_up():
    """A family's backend, protocol or extraction rule is found by name alone (every family is imported
    on a miss), so nothing depends on which family happened to be looked up first."""
    import subprocess
    import sys

    code = ("from medtemporal.registry import lookup; "
            "print(lookup('backend', 'rad3d').name, lookup('protocol', 'rrg-prior-report').name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["rad3d", "rrg-prior-report"]
