"""Dataset families, with no sandbox: the *real* rows of each public dataset (../shared/datasets, copied
unchanged from the projects that publish them) are recognised by their columns; the rows *derived* from
the offline SWE-bench fixture pytest-7168 (tests/family_rows.py) too; every missing or wrong field is an
error naming the instance and the field; the rules each family grades by."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest

from tests import family_rows
from uni_agent_gym.config import EnvConfig
from uni_agent_gym.datasets import DATASET_FORMATS, FAMILIES, detect, log_parser, normalise, r2e_gym
from uni_agent_gym.instances import InstanceError, load_instances, select
from uni_agent_gym.rewards.patches import drop_files
from uni_agent_gym.specs import SpecError, environment_spec, command_of_tests

REAL = Path(__file__).resolve().parents[2] / "shared" / "datasets"
pytestmark = pytest.mark.needs(REAL.exists(), "../shared/datasets beside the checkout")


def real_rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (REAL / name).read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def derived() -> dict[str, dict]:
    return family_rows.rows()


@pytest.mark.parametrize(
    "file, rows, family, decided_by",
    [
        ("swe-bench-verified.legacy.jsonl", 2, "swe-bench", "SWE-bench columns with environment_setup_commit"),
        ("swe-gym.jsonl", 5, "swe-gym", "SWE-bench columns with test lists as lists and no environment_setup_commit"),
        ("swe-rebench-v2.jsonl", 1, "swe-rebench", "an install_config column"),
        ("swe-smith.jsonl", 1, "swe-smith", "an image_name column and an instance_id like owner__repo.commit8.name"),
    ],
    ids=["swe-bench-verified", "swe-gym", "swe-rebench-v2", "swe-smith"],
)
def test_real_rows_are_recognised_by_their_columns_and_normalise(file, rows, family, decided_by):
    assert len(real_rows(file)) == rows  # as ../shared/datasets/README.md lists them
    for row in real_rows(file):
        found, why = detect(row)
        assert (found.name, why) == (family, decided_by)
        task = normalise(row)
        assert task.family == family and normalise(task) == task, "a task normalised again is the same task"
        assert isinstance(task.FAIL_TO_PASS, list) and task.FAIL_TO_PASS


def test_what_real_rows_become():
    gym = normalise(real_rows("swe-gym.jsonl")[0])
    assert gym.image_name == "xingyaoww/sweb.eval.x86_64.getmoto_s_moto-7365:latest"
    assert gym.test_command == "pytest -n0 -rA tests/test_dynamodb/test_dynamodb_update_expressions.py"  # the SWE-Gym fork's moto command
    smith = normalise(real_rows("swe-smith.jsonl")[0])
    assert smith.base_commit == "95280573e15be59036f98d82a8792599c10c6603", "the profile's commit, not the PR's base"
    assert smith.image_name == "swebench/swesmith.x86_64.pandas-dev_1776_pandas.95280573"
    assert smith.hidden_files == ["pandas/tests/indexing/test_datetime.py"] and smith.start_patch == real_rows("swe-smith.jsonl")[0]["patch"]
    assert smith.test_command.endswith("pytest --disable-warnings --color=no --tb=no --verbose pandas/tests/indexing/test_datetime.py pandas/tests/indexing/test_datetime.py")
    assert smith.history == "none"
    with pytest.raises(SpecError, match=re.escape("its environment cannot be built offline: swesmith's profile Pandas95280573 installs a conda environment")):
        environment_spec(smith)
    v2 = normalise(real_rows("swe-rebench-v2.jsonl")[0])
    assert (v2.image_name, v2.log_parser, v2.test_command) == (
        "docker.io/swerebenchv2/unidata-netcdf-c:1925-ad6bff3", "parse_log_jq", "LANG=C.UTF-8 LC_ALL=C.UTF-8 make check")
    with pytest.raises(SpecError) as caught:
        environment_spec(v2)
    assert str(caught.value).endswith("its environment cannot be built offline: its c toolchain and install steps come from its own image "
                                      "recipe, which needs the network: give them in an environments file (toolchain, install_cmd, build_cmd), "
                                      "or run it on its own image (env.workspace: image)"), caught.value  # not "give exact pins"
    verified = normalise(real_rows("swe-bench-verified.legacy.jsonl")[0])
    assert verified.log_parser == "parse_log_pytest_v2" and verified.image_name == "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"


def test_a_row_of_no_family_says_what_each_family_expects():
    row = {name: value for name, value in real_rows("multi-swe-bench.jsonl")[0].items() if name != "org"}  # no longer a pull request
    with pytest.raises(InstanceError, match=r"Instance 'google__gson-1787': the row matches no dataset family \(columns: .*\); expects r2e-gym: "):
        normalise(row)


def test_derived_rows_are_recognised_without_configuration(derived):
    for family, row in derived.items():
        assert detect(row)[0].name == family
        task = normalise(row)
        assert task.family == family and normalise(task) == task
    assert normalise(derived["swe-gym"], "swe-bench").family == "swe-bench", "env.dataset_format names the family"
    assert set(typing.get_args(EnvConfig.model_fields["dataset_format"].annotation)) == set(DATASET_FORMATS)


def test_selection_finds_rows_that_have_no_instance_id(derived):
    r2e = derived["r2e-gym"]
    assert "instance_id" not in r2e
    task = normalise(r2e)
    assert select([derived["swe-bench"], r2e], ids=[task.instance_id]) == [r2e]
    assert select([derived["swe-bench"], r2e], repos=["pytest"]) == [r2e]


def test_a_mixed_file_loads_each_row_as_its_family(tmp_path, derived):
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in derived.values()))
    assert [task.family for task in load_instances(path)] == list(derived)


def bad(row: dict, **change) -> dict:
    out = {**row, **change}
    return {key: value for key, value in out.items() if value is not ...}


BAD_ROWS = [
    ("swe-gym", {"FAIL_TO_PASS": None}, "Instance 'pytest-dev__pytest-7168': missing field(s) FAIL_TO_PASS"),
    ("swe-gym", {"version": ...}, "missing field(s) version"),
    ("swe-gym", {"test_patch": "not a diff"}, "field test_patch is not a git diff"),
    ("swe-rebench", {"install_config": "{not json"}, "field install_config is not valid JSON"),
    ("swe-rebench", {"install_config": {"log_parser": "parse_log_pytest"}}, "field install_config.test_cmd is missing"),
    ("swe-rebench", {"install_config": {"test_cmd": "pytest", "log_parser": "parse_log_nope"}},
     "log parser 'parse_log_nope' is not one of swebench's parsers"),
    ("swe-rebench", {"FAIL_TO_FAIL": "[1]"}, "field FAIL_TO_FAIL expects a list of test names, got list"),
    ("swe-smith", {"repo": "swesmith/nobody__nothing.12345678"}, "swesmith has no repository profile for 'swesmith/nobody__nothing.12345678' (field repo)"),
    ("swe-smith", {"patch": "not a diff"}, "field patch is not a git diff"),
    ("swe-smith", {"FAIL_TO_PASS": []}, "field FAIL_TO_PASS is empty"),
    ("r2e-gym", {"docker_image": None}, "missing field(s) docker_image"),
    ("r2e-gym", {"expected_output_json": "[1]"}, "field expected_output_json expects a JSON dict, got list"),
    ("r2e-gym", {"expected_output_json": "{}"}, "field expected_output_json expects a non-empty object"),
    ("r2e-gym", {"parsed_commit_content": "{}"}, "field parsed_commit_content.old_commit_hash is missing"),
    ("r2e-gym", {"parsed_commit_content": json.dumps({"old_commit_hash": "a", "file_diffs": [{"header": {}}]})},
     "field parsed_commit_content.file_diffs is not R2E-Gym's ParsedCommit"),
]  # fmt: skip


@pytest.mark.parametrize("family, change, message", BAD_ROWS, ids=[f"{f}-{m[:30]}" for f, _, m in BAD_ROWS])
def test_a_missing_or_wrong_field_names_the_instance_and_the_field(derived, family, change, message):
    row = bad(derived[family], **change)
    with pytest.raises(InstanceError, match=r"Instance '[^']+': .*" + re.escape(message.removeprefix("Instance 'pytest-dev__pytest-7168': "))):
        normalise(row)


def test_swe_rebench_builds_from_its_row_with_exact_pins_only(derived):
    task = normalise(derived["swe-rebench"])
    spec = environment_spec(task)
    assert spec.source == "the row's install_config" and spec.python == "3.9"
    assert spec.requirements == family_rows.fixture_sources.fixtures()[family_rows.FIXTURE]["pip_requirements"]
    assert spec.install == "LANG=C.UTF-8 LC_ALL=C.UTF-8 python -m pip install -e ."
    assert spec.env == {"SETUPTOOLS_SCM_PRETEND_VERSION": "5.4.1"}
    assert command_of_tests(task) == "LANG=C.UTF-8 LC_ALL=C.UTF-8 pytest -rA testing/io/test_saferepr.py"
    config = task.columns["install_config"]
    refused = {
        "conda": ({**config, "packages": "environment.yml"}, "it installs a conda environment.yml"),
        "apt": ({**config, "pre_install": ["apt-get install -y libfoo"]}, "its install steps need the network (apt-get"),
        "loose": ({**config, "pip_packages": ["pytest", "attrs==23.1.0"]}, "pip_packages has packages without an exact version (pytest)"),
    }
    for name, (changed, reason) in refused.items():
        row = {**derived["swe-rebench"], "install_config": changed, "requirements": None if name == "loose" else derived["swe-rebench"]["requirements"]}
        with pytest.raises(SpecError, match=re.escape(reason)):
            environment_spec(normalise(row))


@pytest.mark.parametrize(
    "parsed, verdict, kind",
    [
        ({"test_a": "PASSED", "T.test_b": "FAILED"}, True, None),
        ({"test_a": "PASSED", "T.test_b": "FAILED", "test_c": "PASSED"}, False, "unexpected"),
        ({"test_a": "PASSED"}, False, "missing"),
        ({"test_a": "PASSED", "T.test_b": "PASSED"}, False, "mismatched"),
        ({"\x1b[1mtest_a\x1b[0m": "PASSED", "T.test_b - AssertionError": "FAILED"}, True, None),
        ({"test_a": "PASSED", "test_z": "FAILED"}, False, "unexpected"),
    ],
    ids=["exact", "an-extra-test", "a-missing-test", "an-expected-failure-passes", "colours-and-messages", "same-count-other-names"],
)
def test_r2e_gym_grades_by_exact_equality_with_the_expected_outcomes(parsed, verdict, kind):
    resolved, report = r2e_gym.compare(parsed, {"test_a": "PASSED", "T.test_b": "FAILED"})
    assert resolved is verdict
    assert (kind is None) == all(not report[key] for key in ("unexpected", "missing", "mismatched"))
    if kind:
        assert report[kind]


def test_r2e_gym_reads_the_short_test_summary_as_r2e_gym_does():
    log = ("r2e_tests/test_1.py ..F\n=== short test summary info ===\nPASSED r2e_tests/test_1.py::test_a\n"
           "PASSED r2e_tests/test_1.py::TestX::test_b[1-2]\nFAILED r2e_tests/test_1.py::test_c - assert 1 == 2\n"
           "ERROR r2e_tests/test_1.py::test_d - fixture\n=== 2 passed, 1 failed, 1 error in 0.1s ===\n")  # fmt: skip
    task = normalise(family_rows.r2e_row())
    assert log_parser(task)(log) == {"test_a": "PASSED", "TestX.test_b[1-2]": "PASSED", "test_c": "FAILED", "test_d": "ERROR"}
    assert log_parser(task)("PASSED a.py::test_a\n") == {}, "without the summary header R2E-Gym reads nothing"


def test_r2e_gym_gold_patch_is_the_non_test_python_diffs_of_its_commit(derived):
    task = normalise(derived["r2e-gym"])
    assert task.patch == family_rows.fixture_row()["patch"]
    assert task.hidden_paths == ["/r2e_tests", "/testbed/run_tests.sh"] and task.base_commit == family_rows.fixture_row()["base_commit"]


def test_swe_smith_start_is_the_bug_on_the_profiles_commit(derived):
    task = normalise(derived["swe-smith"])
    _, fixed = family_rows.fixed_commit()
    assert task.base_commit == fixed and task.start_patch == derived["swe-smith"]["patch"]
    assert task.hidden_files == ["testing/io/test_saferepr.py"] and task.test_patch == ""
    assert task.test_command == f"{family_rows.SMITH_TEST_CMD} testing/io/test_saferepr.py"
    assert log_parser(task)("testing/io/test_saferepr.py::test_maxsize PASSED   [ 50%]\n") == {"testing/io/test_saferepr.py::test_maxsize": "PASSED"}


def test_every_family_is_listed():
    assert list(FAMILIES) == ["r2e-gym", "multi-swe-bench", "swe-smith", "swe-rebench", "swe-bench", "swe-gym"]
    assert all(family.columns and family.images and family.offline for family in FAMILIES.values())


def test_drop_files_removes_protected_sections():
    patch = ("diff --git a/run_tests.sh b/run_tests.sh\n--- a/run_tests.sh\n+++ b/run_tests.sh\n@@ -1 +1 @@\n-a\n+b\n"
             "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n"
             "diff --git a/r2e_tests/test_1.py b/r2e_tests/test_1.py\nnew file mode 100644\n--- /dev/null\n+++ b/r2e_tests/test_1.py\n@@ -0,0 +1 @@\n+x\n")  # fmt: skip
    kept, dropped = drop_files(patch, ["run_tests.sh", "r2e_tests"])
    assert dropped == ["run_tests.sh", "r2e_tests/test_1.py"]
    assert kept == "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n"


def test_the_datasets_tables_are_never_cut_when_not_on_a_terminal(capsys, monkeypatch):
    """Piped (not a terminal, no COLUMNS), every cell is whole, wrapped where long: names, images and reasons
    were cut at 80 columns."""
    from uni_agent_gym.cli import main

    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["datasets", "--dataset", str(REAL / "swe-rebench-v2.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and f"{REAL / 'swe-rebench-v2.jsonl'}: 1 row" in out and ": 1 rows" not in out
    [row] = table_rows(out)
    assert row[:2] == ["swe-rebench", "Unidata/netcdf-c"]
    assert "its c toolchain and install steps come from its own image recipe, which needs the network" in row[-1], row
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    unspaced = lambda text: "".join(text.split())  # noqa: E731 - a folded word is joined with a space
    assert "…" not in out and [unspaced(row[1]) for row in table_rows(out)] == [unspaced(family.columns) for family in FAMILIES.values()]


def table_rows(out: str) -> list[list[str]]:
    """The cells of a printed table's rows, each cell's wrapped lines joined (a row starts where its first cell does)."""
    rows: list[list[str]] = []
    for line in out.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if cells[0] or not rows:
            rows.append(cells)
        else:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
    return rows


def test_the_datasets_command_lists_the_families_and_what_a_file_holds(tmp_path, derived, capsys, monkeypatch):
    """Without a dataset: every family; with one: rows per family and repository, images on this machine
    (a Docker engine is asked; '?' without one), and whether `images build` can make them here or why not."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "400")
    assert main(["datasets"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in FAMILIES) and "install_config" in listing
    rows = tmp_path / "mixed.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in [*derived.values(), *real_rows("swe-gym.jsonl")]))
    environments = tmp_path / "environments.json"
    environments.write_text(json.dumps([{**value, "instance_id": key} for key, value in family_rows.environments().items()]))
    mirrors = [f"--mirror={repo}={path}" for repo, path in family_rows.mirrors().items()]
    assert main(["datasets", "--dataset", str(rows), "--environments", str(environments), *mirrors]) == 0
    table = {tuple(cell.strip() for cell in line.split("│")[1:5]): [cell.strip() for cell in line.split("│")[5:9]]
             for line in capsys.readouterr().out.splitlines() if line.count("│") == 9}  # fmt: skip
    _, fixed = family_rows.fixed_commit()
    assert table[("swe-gym", "getmoto/moto", "python", "5")][1:] == [
        "0", "5 pytest", "5: its environment cannot be built offline: SWE-Gym's recipe for getmoto/moto (its fork of swebench) installs with the network; "
        "give exact pins in an environments file"]
    assert table[("swe-rebench", "pytest-dev/pytest", "python", "1")][1:] == ["1", "1 pytest", ""]
    assert table[("swe-smith", f"swesmith/pytest-dev__pytest.{fixed[:8]}", "python", "1")][1:] == ["1", "1 pytest", ""]
    assert table[("r2e-gym", "pytest", "python", "1")][1:] == ["0", "0", "1: its tests exist only in its image"]  # R2E-Gym compares every outcome
