"""Loading and checking SWE-bench rows, on the real SWE-bench Lite rows in ../shared."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from uni_agent_gym.instances import InstanceError, image_name, load_instances, normalise, patch_files, read_rows, select

SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"
LITE = SHARED / "lite.jsonl"
DERIVED = SHARED / "derived.jsonl"

pytestmark = pytest.mark.needs(LITE.exists(), "../shared/swebench beside the checkout")


def test_all_lite_rows_load_and_normalise():
    rows = load_instances(LITE)
    assert len(rows) == 300
    assert all(isinstance(task.FAIL_TO_PASS, list) and task.FAIL_TO_PASS for task in rows)
    assert all(isinstance(task.PASS_TO_PASS, list) for task in rows)
    raw = json.loads(LITE.read_text().splitlines()[0])
    assert isinstance(raw["FAIL_TO_PASS"], str), "the fixture keeps the JSON-string form"
    assert rows[0].FAIL_TO_PASS == json.loads(raw["FAIL_TO_PASS"])


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_other_file_formats_give_the_same_rows(tmp_path, suffix):
    rows = read_rows(DERIVED)
    path = tmp_path / f"rows{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        import datasets

        datasets.Dataset.from_list(rows).to_parquet(str(path))
    assert load_instances(path) == load_instances(DERIVED)


def test_a_dataset_directory_loads_through_datasets(tmp_path):
    """`datasets.load_dataset` on a local dataset repo layout (the hub itself is unreachable here)."""
    import datasets

    (tmp_path / "data").mkdir()
    datasets.Dataset.from_list(read_rows(DERIVED)[:3]).to_parquet(str(tmp_path / "data" / "test-00000-of-00001.parquet"))
    rows = load_instances(str(tmp_path), split="test")
    assert [task.instance_id for task in rows] == [row["instance_id"] for row in read_rows(DERIVED)[:3]]
    with pytest.raises(InstanceError, match="Cannot load dataset 'no-such-org/no-such-dataset-uag'"):
        load_instances("no-such-org/no-such-dataset-uag")


def test_selection():
    rows = read_rows(LITE)
    assert [r["instance_id"] for r in select(rows, ids=["psf__requests-2317", "django__django-11099"])] == [
        "psf__requests-2317", "django__django-11099",
    ]  # fmt: skip
    assert {r["repo"] for r in select(rows, repos=["pallets/flask"])} == {"pallets/flask"}
    matched = select(rows, pattern="sympy__sympy-2")
    assert len(matched) == sum(1 for r in rows if "sympy__sympy-2" in r["instance_id"]) > 0
    assert all(re.search("sympy__sympy-2", r["instance_id"]) for r in matched)
    assert select(rows, slice_spec="0:3") == rows[:3]
    assert select(rows, slice_spec="5") == rows[:5]
    assert select(rows, slice_spec="::100") == rows[::100]
    assert len(select(rows, repos=["django/django"], slice_spec=":2")) == 2
    with pytest.raises(InstanceError, match="Unknown instance id\\(s\\): nope__nope-1"):
        select(rows, ids=["nope__nope-1"])
    with pytest.raises(InstanceError, match="Expects a slice like '0:10'"):
        select(rows, slice_spec="a:b")


@pytest.mark.parametrize(
    "selection, described",
    [
        ({"slice_spec": "5:2"}, "slice '5:2'"),
        ({"slice_spec": "400:"}, "slice '400:'"),
        ({"pattern": "^flask"}, "pattern '^flask'"),
        ({"repos": ["pallets/flask"], "slice_spec": "0:0"}, "repos 'pallets/flask', slice '0:0'"),
        ({"ids": []}, "instance ids ''"),
    ],
    ids=["backwards-slice", "past-the-end", "pattern", "repos-then-slice", "no-ids"],
)
def test_a_selection_of_nothing_says_what_it_was_and_how_many_rows_there_are(selection, described):
    with pytest.raises(InstanceError, match=re.escape(f"The selection ({described}) matches none of the dataset's 300 rows")):
        select(read_rows(LITE), **selection)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "is empty"), ("\n\n", "is empty"), ("[1]\n", "rows.jsonl:1: not a JSON object (got list)"),
        (b"\xff\xfe", "is not UTF-8 text"),
    ],
    ids=["empty", "blank-lines", "not-an-object", "binary"],
)  # fmt: skip
def test_a_dataset_file_without_rows_is_an_error(tmp_path, text, expected):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    with pytest.raises(InstanceError, match=re.escape(expected)):
        read_rows(path)
    with pytest.raises(InstanceError, match="does not exist"):
        read_rows(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(
    "instance_id, image",
    [
        ("django__django-11099", "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"),
        ("pallets__flask-4045", "swebench/sweb.eval.x86_64.pallets_1776_flask-4045:latest"),
        ("Some__Repo-1", "swebench/sweb.eval.x86_64.some_1776_repo-1:latest"),
    ],
)
def test_official_image_names(instance_id, image):
    assert image_name(instance_id) == image


def good_row() -> dict:
    return dict(read_rows(DERIVED)[0])


@pytest.mark.parametrize(
    "change, message",
    [
        ({"base_commit": None}, "missing field(s) base_commit"),
        ({"problem_statement": ""}, "missing field(s) problem_statement"),
        ({"FAIL_TO_PASS": None, "PASS_TO_PASS": None}, "missing field(s) FAIL_TO_PASS, PASS_TO_PASS"),
        ({"FAIL_TO_PASS": "[not json"}, "field FAIL_TO_PASS is not a JSON list"),
        ({"PASS_TO_PASS": '{"a": 1}'}, "field PASS_TO_PASS expects a list of test names, got dict"),
        ({"FAIL_TO_PASS": "[]"}, "field FAIL_TO_PASS is empty"),
        ({"patch": "this is not a diff"}, "field patch is not a git diff"),
        ({"test_patch": "--- a\n+++ b\n"}, "field test_patch is not a git diff"),
    ],
    ids=["no-base-commit", "empty-statement", "no-test-lists", "bad-json", "not-a-list", "empty-f2p", "bad-patch", "bad-test-patch"],
)
def test_bad_rows_name_the_instance_and_field(change, message):
    row = {**good_row(), **change}
    with pytest.raises(InstanceError, match=re.escape(f"Instance '{row['instance_id']}': {message}")):
        normalise(row)


def test_numeric_version_and_list_fields_are_accepted():
    row = {**good_row(), "version": 2.0, "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": []}
    normalised = normalise(row)
    assert (normalised.version, normalised.FAIL_TO_PASS, normalised.PASS_TO_PASS) == ("2.0", ["t::a"], [])


def test_patch_files():
    row = good_row()
    assert patch_files(row["patch"]) == ["src/flask/blueprints.py"]
    tests = patch_files(row["test_patch"])
    assert len(tests) >= 1 and all(path.startswith("tests/") for path in tests), tests


def test_malformed_jsonl_line_says_where(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(DERIVED.read_text().splitlines()[0] + "\n{broken\n")
    with pytest.raises(InstanceError, match=r"rows\.jsonl:2: not a JSON object"):
        load_instances(path)
