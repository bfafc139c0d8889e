"""The report of an evaluation run: resolved rate overall and per repo, exit reasons, turns, tokens, time, and the
resolved rate over the tasks whose tests accept no wrong fix (their reward reports' `strength`: `env.validations`).

Written as `report.json`, `report.md` and a PNG chart (`report.png`).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from uni_agent_gym.eval.records import has_verdict
from uni_agent_gym.rewards.swebench import EMPTY_PATCH


def _resolved_by(trajectories: list[dict[str, Any]], key: dict[str, str], ungraded: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Instances, graded, resolved and the rate over the graded per value of `key` (instance id -> repo, or
    language): an instance that never got a verdict is no 0 of the model's (0.0 when none was graded)."""
    groups: dict[str, dict[str, Any]] = {}
    for trajectory in trajectories:
        entry = groups.setdefault(key.get(trajectory["instance_id"], "?"), {"instances": 0, "graded": 0, "resolved": 0})
        entry["instances"] += 1
        entry["graded"] += trajectory["instance_id"] not in ungraded
        entry["resolved"] += trajectory["resolved"]
    for entry in groups.values():
        entry["resolved_rate"] = entry["resolved"] / entry["graded"] if entry["graded"] else 0.0
    return dict(sorted(groups.items()))


def by_strength(trajectories: list[dict[str, Any]], ungraded: dict[str, str]) -> dict[str, Any]:
    """The graded instances by their task's strength (as their reward report carries it): those whose tests killed
    every wrong variant of the gold (`no_survivor`: a 1.0 there is worth the most), those with survivors (a 1.0 may be
    a wrong fix their tests accept), and how many have no strength measured (neither `validate --variants` nor a
    validations file said it)."""
    groups: dict[str, list[dict[str, Any]]] = {"no_survivor": [], "with_survivors": [], "not_measured": []}
    for trajectory in trajectories:
        if trajectory["instance_id"] in ungraded:
            continue
        survivors = ((trajectory.get("reward_report") or {}).get("strength") or {}).get("survivors")
        groups["not_measured" if survivors is None else "with_survivors" if survivors else "no_survivor"].append(trajectory)
    counted = {}
    for name, members in groups.items():
        resolved = sum(bool(t["resolved"]) for t in members)
        counted[name] = {"graded": len(members), "resolved": resolved, "resolved_rate": resolved / len(members) if members else 0.0}
    counted["with_survivors"]["ids"] = sorted(t["instance_id"] for t in groups["with_survivors"])
    return counted


def build_report(trajectories: list[dict[str, Any]], repos: dict[str, str], retried: int = 0, languages: dict[str, str] | None = None) -> dict[str, Any]:
    """Aggregate trajectories (`repos` and `languages` map instance id to repo and language; `retried`:
    instances this run played again because their sandbox failed on an earlier run)."""
    total = len(trajectories)
    resolved = [t for t in trajectories if t["resolved"]]
    tokens = [t["usage"]["prompt_tokens"] + t["usage"]["completion_tokens"] for t in trajectories]
    ungraded = {t["instance_id"]: t.get("error") or f"grading {(t.get('reward_report') or {}).get('status')}"
                for t in trajectories if not has_verdict(t)}  # fmt: skip
    seconds = [t["seconds"] for t in trajectories]
    return {
        "instances": total,
        "resolved": len(resolved),
        # over the graded: an instance without a verdict (its sandbox or grading failed) is counted apart
        "resolved_rate": len(resolved) / (total - len(ungraded)) if total > len(ungraded) else 0.0,
        "resolved_ids": sorted(t["instance_id"] for t in resolved),
        # graded 0 with no test run: the agent changed nothing (the official harness's `empty_patch_ids`)
        "empty_patch_ids": sorted(t["instance_id"] for t in trajectories if (t.get("reward_report") or {}).get("error") == EMPTY_PATCH),
        # the same rate over the graded tasks whose tests accept no wrong variant of their gold, and the others
        "by_strength": by_strength(trajectories, ungraded),
        "per_repo": _resolved_by(trajectories, repos, ungraded),
        "per_language": _resolved_by(trajectories, languages or {}, ungraded),
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


def _group_row(name: str, entry: dict[str, Any]) -> str:
    rate = f"{entry['resolved_rate']:.1%}" if entry["graded"] else "–"  # none graded: no rate, not 0%
    return f"| {name} | {entry['instances']} | {entry['graded']} | {entry['resolved']} | {rate} |"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def write_report(report: dict[str, Any], output_dir: Path) -> None:
    (output_dir / "report.json").write_text(json.dumps(report, indent=1))
    ungraded, models = report["ungraded"], report.get("models", [])
    lines = [
        "# Evaluation report",
        "",
        (f"Resolved **{report['resolved']} / {report['graded']}** graded ({report['resolved_rate']:.1%}); "
         f"**{len(ungraded)} of {report['instances']} not graded** (listed below); " if ungraded
         else f"Resolved **{report['resolved']} / {report['instances']}** ({report['resolved_rate']:.1%}); ")
        + f"{report['total_tokens']} tokens; median {report['seconds_per_instance']['median']:.1f} s per instance.",
        *([f"This run retried {report['retried']} instance(s) whose sandbox failed (env_error) on an earlier run."]
          if report.get("retried") else []),
        *_strength_lines(report),
        *([f"**Results of {len(models)} models** (resumed with --allow-model-change): "
           + "; ".join(f"{m['model_name']} at {m['base_url']} (settings {m['settings_digest']})" for m in models) + "."]
          if len(models) > 1 else []),
        "",
        "| repo | instances | graded | resolved | rate |",
        "|---|---|---|---|---|",
        *(_group_row(repo, entry) for repo, entry in report["per_repo"].items()),
        "",
        "| language | instances | graded | resolved | rate |",
        "|---|---|---|---|---|",
        *(_group_row(language, entry) for language, entry in report["per_language"].items()),
        "",
        *(["| not graded | why |", "|---|---|", *(f"| {_cell(i)} | {_cell(why)} |" for i, why in sorted(ungraded.items())), ""]
          if ungraded else []),
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


def _rate(group: dict[str, Any]) -> str:
    return f"{group['resolved_rate']:.1%}" if group["graded"] else "–"  # none graded: no rate, not 0%


def _strength_lines(report: dict[str, Any]) -> list[str]:
    """The resolved rate over the tasks with no survivor, beside those with survivors and those not measured."""
    groups = report.get("by_strength")
    if not groups or not report["graded"]:
        return []
    strong, weak, unmeasured = groups["no_survivor"], groups["with_survivors"], groups["not_measured"]
    if not strong["graded"] and not weak["graded"]:
        return ["No graded task's strength was measured (`validate --variants`, then `eval --validations DIR/validation.json`)."]
    return [f"Over the **{strong['graded']}** graded task(s) whose tests killed every wrong variant of their gold: resolved "
            f"**{strong['resolved']} / {strong['graded']}** ({_rate(strong)}); {weak['graded']} with survivors (a 1.0 there may be a "
            f"wrong fix): {weak['resolved']} / {weak['graded']} ({_rate(weak)}){': ' + ', '.join(weak['ids'][:10]) if weak['ids'] else ''}"
            f"{' ...' if len(weak['ids']) > 10 else ''}; {unmeasured['graded']} with no strength measured."]  # fmt: skip


def _chart(report: dict[str, Any], path: Path) -> None:
    import matplotlib.pyplot as plt

    figure = chart_figure(report)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def chart_figure(report: dict[str, Any]) -> Any:
    """The figure of `report.png`: the resolved rate per repository and per language as horizontal bars (one
    name a row, so a dozen repositories' names never run into each other; the figure grows with their
    count), then turns and tokens per episode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = max(len(report["per_repo"]), len(report["per_language"]), 1)
    bars, histograms = 0.32 * rows + 1.0, 3.2  # inches
    figure = plt.figure(figsize=(13, bars + histograms))
    grid = figure.add_gridspec(2, 2, height_ratios=[bars, histograms], width_ratios=[3, 2])
    graded = report.get("graded", report["instances"])
    _rates(figure.add_subplot(grid[0, 0]), report["per_repo"], f"resolved rate by repository ({report['resolved']}/{graded} graded)")
    _rates(figure.add_subplot(grid[0, 1]), report["per_language"], "resolved rate by language")
    turns, tokens = figure.add_subplot(grid[1, 0]), figure.add_subplot(grid[1, 1])
    turns.hist(list(report["turns"].values()) or [0], bins=10, color="#52a552")
    turns.set_title("turns per episode")
    tokens.hist(list(report["tokens"].values()) or [0], bins=10, color="#d8823b")
    tokens.set_title("tokens per episode")
    figure.tight_layout()
    return figure


def _rates(axes: Any, groups: dict[str, dict[str, Any]], title: str) -> None:
    """One bar a group: its name on the left, `resolved/graded` at the bar's end, and how many got no verdict
    (their sandbox or grading failed), which the rate leaves out."""
    names = list(groups)
    rates = [groups[name]["resolved_rate"] for name in names]
    axes.barh(names, rates, color="#3b7dd8")
    axes.invert_yaxis()  # the first name on top, as in report.md
    axes.set_xlim(0, 1.4)  # room for the counts
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    for row, name in enumerate(names):
        entry = groups[name]
        graded = entry.get("graded", entry["instances"])
        apart = f" ({entry['instances'] - graded} not graded)" if graded < entry["instances"] else ""
        axes.text(rates[row] + 0.02, row, f"{entry['resolved']}/{graded}{apart}", va="center", fontsize=8)
    axes.set_title(title)
