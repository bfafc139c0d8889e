"""The report of an evaluation run: resolved rate overall and per repo, exit reasons, turns, tokens, time.

Written as `report.json`, `report.md` and a PNG chart (`report.png`).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from uni_agent_gym.rewards.swebench import EMPTY_PATCH


def _resolved_by(trajectories: list[dict[str, Any]], key: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Instances, resolved and the rate per value of `key` (instance id -> repo, or language)."""
    groups: dict[str, dict[str, Any]] = {}
    for trajectory in trajectories:
        entry = groups.setdefault(key.get(trajectory["instance_id"], "?"), {"instances": 0, "resolved": 0})
        entry["instances"] += 1
        entry["resolved"] += trajectory["resolved"]
    for entry in groups.values():
        entry["resolved_rate"] = entry["resolved"] / entry["instances"]
    return dict(sorted(groups.items()))


def build_report(trajectories: list[dict[str, Any]], repos: dict[str, str], retried: int = 0, languages: dict[str, str] | None = None) -> dict[str, Any]:
    """Aggregate trajectories (`repos` and `languages` map instance id to repo and language; `retried`:
    instances this run played again because their sandbox failed on an earlier run)."""
    total = len(trajectories)
    resolved = [t for t in trajectories if t["resolved"]]
    tokens = [t["usage"]["prompt_tokens"] + t["usage"]["completion_tokens"] for t in trajectories]
    # no verdict: the sandbox failed before grading (env_error), or the grading failed on the infrastructure
    ungraded = {t["instance_id"]: t.get("error") or f"grading {(t.get('reward_report') or {}).get('status')}"
                for t in trajectories if (t.get("reward_report") or {}).get("caused_by", "none") == "infrastructure"
                or not t.get("reward_report")}  # fmt: skip
    seconds = [t["seconds"] for t in trajectories]
    return {
        "instances": total,
        "resolved": len(resolved),
        "resolved_rate": len(resolved) / total if total else 0.0,
        "resolved_ids": sorted(t["instance_id"] for t in resolved),
        # graded 0 with no test run: the agent changed nothing (the official harness's `empty_patch_ids`)
        "empty_patch_ids": sorted(t["instance_id"] for t in trajectories if (t.get("reward_report") or {}).get("error") == EMPTY_PATCH),
        "per_repo": _resolved_by(trajectories, repos),
        "per_language": _resolved_by(trajectories, languages or {}),
        "exit_reasons": dict(Counter(t["exit_reason"] for t in trajectories)),
        # gradings that ended without a verdict, by whose they are (the patch's keep the episode's exit reason)
        "grading_failures": dict(Counter(
            f"{(t.get('reward_report') or {}).get('status')} ({(t.get('reward_report') or {}).get('caused_by')}'s)"
            for t in trajectories if (t.get("reward_report") or {}).get("caused_by")
        )),
        "retried": retried,
        "graded": total - len(ungraded),
        "ungraded": ungraded,
        "turns": {t["instance_id"]: t["turns"] for t in trajectories},
        "tokens": {t["instance_id"]: tok for t, tok in zip(trajectories, tokens)},
        "total_tokens": sum(tokens),
        "total_cost": sum(t["usage"]["cost"] for t in trajectories),
        "seconds_per_instance": {
            "mean": statistics.mean(seconds) if seconds else 0.0,
            "median": statistics.median(seconds) if seconds else 0.0,
            "max": max(seconds, default=0.0),
        },
    }


def write_report(report: dict[str, Any], output_dir: Path) -> None:
    (output_dir / "report.json").write_text(json.dumps(report, indent=1))
    lines = [
        "# Evaluation report",
        "",
        f"Resolved **{report['resolved']} / {report['instances']}** ({report['resolved_rate']:.1%}); "
        f"{report['total_tokens']} tokens; median {report['seconds_per_instance']['median']:.1f} s per instance.",
        *([f"This run retried {report['retried']} instance(s) whose sandbox failed (env_error) on an earlier run.", ""]
          if report.get("retried") else [""]),
        "| repo | instances | resolved | rate |",
        "|---|---|---|---|",
        *(f"| {repo} | {e['instances']} | {e['resolved']} | {e['resolved_rate']:.1%} |" for repo, e in report["per_repo"].items()),
        "",
        "| language | instances | resolved | rate |",
        "|---|---|---|---|",
        *(f"| {language} | {e['instances']} | {e['resolved']} | {e['resolved_rate']:.1%} |" for language, e in report["per_language"].items()),
        "",
        "| exit reason | episodes |",
        "|---|---|",
        *(f"| {reason} | {count} |" for reason, count in sorted(report["exit_reasons"].items(), key=lambda item: str(item[0]))),
        "",
        *(["| grading failure (whose) | episodes |", "|---|---|",
           *(f"| {what} | {count} |" for what, count in sorted(report["grading_failures"].items())), ""]
          if report.get("grading_failures") else []),
        "![chart](report.png)",
        "",
    ]
    (output_dir / "report.md").write_text("\n".join(lines))
    _chart(report, output_dir / "report.png")


def _chart(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (rates, turns, tokens) = plt.subplots(1, 3, figsize=(13, 3.6))
    repos = list(report["per_repo"])
    rates.bar(repos, [report["per_repo"][repo]["resolved_rate"] for repo in repos], color="#3b7dd8")
    rates.set_ylim(0, 1)
    rates.set_title(f"resolved rate ({report['resolved']}/{report['instances']})")
    rates.tick_params(axis="x", labelrotation=20)
    turns.hist(list(report["turns"].values()) or [0], bins=10, color="#52a552")
    turns.set_title("turns per episode")
    tokens.hist(list(report["tokens"].values()) or [0], bins=10, color="#d8823b")
    tokens.set_title("tokens per episode")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
