"""Test strength over the fixtures: `validate --variants N` on every fixture row the suite ships whose image is here, as a
user runs it, and what it costs beside one grading.

- Python: the 19 SWE-bench fixtures (../shared/swebench/derived.jsonl, their exact pins), on their instance images;
- other languages: the C, Go and Java fixtures (tests/languages/derived.jsonl, tests/languages/environments.json);
- the families' rows (tests/family_rows.py: one instance in each family's shape).

Per task: the variants made and graded, those killed, the survivors (operator, where, and whether suspected
equivalent), the strength, the wall time of its variants, and that time divided by one grading of its gold patch
measured in the same run (the baseline: `runs.gold.seconds` of the same `validate`). The goal the issue set: 8
variants in at most 3x one grading.

Usage: python bench/validate_fixtures.py [--variants 8] [--sets python,languages,families] [--workers 1]
A set whose images are not here is skipped with the reason (the test suite builds them: tests/fixture_sources.py,
tests/language_fixtures.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SHARED = HERE.parent / "shared" / "swebench"
sys.path.insert(0, str(HERE))
CLI = [sys.executable, "-m", "uni_agent_gym.cli"]
# SWE-smith adds a repository by registering its profile in swesmith's registry, in the process that reads the rows:
# the fixture's profile is registered so before `validate` runs (tests/family_rows.py does the same for the suite).
SMITH_CLI = [sys.executable, "-c", "import sys; from tests import family_rows; family_rows.register_smith_profile(); "
             "from uni_agent_gym.cli import main; sys.exit(main(sys.argv[1:]))"]  # fmt: skip


def python_set(work: Path) -> list[tuple[Path, list[str], list[str]]] | str:
    from uni_agent_gym.deployments.docker import image_exists
    from uni_agent_gym.instances import normalise

    rows = [json.loads(line) for line in (SHARED / "derived.jsonl").read_text().splitlines() if line.strip()]
    missing = [row["instance_id"] for row in rows if not image_exists(normalise(row).image)]
    if missing:
        return f"{len(missing)} of {len(rows)} fixture images are not here (make test builds them)"
    config = work / "python.json"
    config.write_text(json.dumps({"env": {"cache_dir": str(work / "cache"), "workspace": "image"}}))
    return [(SHARED / "derived.jsonl", ["--environments", str(SHARED / "fixtures.json"), "--config", str(config)], CLI)]


def languages_set(work: Path) -> list[tuple[Path, list[str], list[str]]] | str:
    from tests import language_fixtures
    from uni_agent_gym.deployments.docker import image_exists
    from uni_agent_gym.instances import normalise

    rows = list(language_fixtures.derived_rows().values())
    missing = [row["instance_id"] for row in rows if not image_exists(normalise(row).image)]
    if missing:
        return f"{len(missing)} of {len(rows)} language fixture images are not here (make test builds them)"
    built = language_fixtures.build_config(rows)
    config = work / "languages.json"
    config.write_text(json.dumps({"env": {"cache_dir": str(work / "cache"), "workspace": "image", "mirrors": built.env.mirrors}}))
    dataset = work / "languages.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return [(dataset, ["--environments", str(language_fixtures.ENVIRONMENTS), "--config", str(config)], CLI)]


def families_set(work: Path) -> list[tuple[Path, list[str], list[str]]] | str:
    """Each family's row of pytest-7168 with the settings tests/test_families.py grades it with."""
    from tests import family_rows
    from tests.test_families import settings
    from uni_agent_gym.deployments.docker import image_exists
    from uni_agent_gym.instances import normalise

    rows = family_rows.rows()
    missing = [family for family, row in rows.items() if not image_exists(normalise(row).image)]
    if missing:
        return f"the images of {', '.join(missing)} are not here (tests/test_families.py builds them)"
    found = []
    for family, row in rows.items():
        (work / family).mkdir(parents=True, exist_ok=True)
        dataset, config = work / family / "rows.jsonl", work / family / "settings.json"
        dataset.write_text(json.dumps(row) + "\n")
        config.write_text(json.dumps(settings(work / family, family)))
        found.append((dataset, ["--config", str(config)], SMITH_CLI if family == "swe-smith" else CLI))
    return found


SETS = {"python": python_set, "languages": languages_set, "families": families_set}


def main(variants: int, names: list[str], workers: int) -> None:
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.errors import DeploymentError

    try:
        docker_client()
    except DeploymentError as exc:
        print(f"skipped: no Docker engine ({exc})")
        return
    work = Path(tempfile.mkdtemp(prefix="uag-bench-strength-"))
    ratios, weak, measured = [], [], 0
    for name in names:
        found = SETS[name](work)
        if isinstance(found, str):
            print(f"== {name}: skipped: {found}")
            continue
        for number, (dataset, extra, cli) in enumerate(found):
            ratios_of, weak_of = run_set(f"{name}-{number}", cli, dataset, extra, work, variants, workers)
            ratios += ratios_of
            weak += weak_of
            measured += len(ratios_of)
    if ratios:
        print(f"\n{len(weak)} of {measured} measured tasks accept a wrong variant; variants / one grading: median {statistics.median(ratios):.2f}x, "
              f"max {max(ratios):.2f}x (goal: 8 variants at most 3x)")  # fmt: skip


def run_set(name: str, cli: list[str], dataset: Path, extra: list[str], work: Path, variants: int, workers: int) -> tuple[list[float], list[str]]:
    """One `validate` run; its table printed; (each measured task's ratio, the tasks with survivors)."""
    ratios, weak = [], []
    output = work / f"out-{name}"
    done = subprocess.run([*cli, "validate", "--dataset", str(dataset), "--deployment", "docker",
                           "--workers", str(workers), "--variants", str(variants), "--output", str(output), *extra],
                          capture_output=True, text=True, cwd=HERE)  # fmt: skip
    report_path = output / "validation.json"
    if not report_path.exists():
        print(f"== {name}: validate failed ({done.returncode}): {(done.stderr or done.stdout)[-2000:]}")
        return ratios, weak
    report = json.loads(report_path.read_text())
    print(f"== {name}: validated {report['validated']} of {report['tasks']}")
    print(f"{'instance':44} {'made':>4} {'tried':>5} {'killed':>6} {'strength':>8} {'variants s':>10} {'gold s':>7} {'ratio':>6}  survivors")
    for result in report["results"]:
        strength = result.get("strength") or {}
        gold = result["runs"]["gold"].get("seconds") or 0.0
        seconds = strength.get("seconds", 0.0)
        ratio = seconds / gold if gold else float("nan")
        if strength.get("tried"):
            ratios.append(ratio)
        survivors = "; ".join(f"{s['operator']} at {s['where']}{' (equivalent?)' if s['equivalent'] else ''}" for s in strength.get("survivors", []))
        if strength.get("survivors"):
            weak.append(result["instance_id"])
        print(f"{result['instance_id']:44} {strength.get('variants', 0):>4} {strength.get('tried', 0):>5} {strength.get('killed', 0):>6} "
              f"{strength.get('strength') if strength.get('strength') is not None else '-':>8} {seconds:>10.1f} {gold:>7.1f} {ratio:>6.2f}  {survivors}")  # fmt: skip
    print(f"   kills per operator: {json.dumps(report['strength']['by_operator'])}")
    return ratios, weak


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--sets", default="python,languages,families")
    parser.add_argument("--workers", type=int, default=1)
    arguments = parser.parse_args()
    main(arguments.variants, [name for name in arguments.sets.split(",") if name], arguments.workers)
