"""The `uni-agent-gym` command: parses arguments, builds configs and calls one driver function."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import traceback
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from uni_agent_gym.arguments import (
    BadArgument,
    argument,
    debian_mirror,
    http_url,
    registry_address,
    input_directory,
    mirror,
    output_directory,
    output_file,
    parquet_file,
    non_negative_int,
    positive_float,
    positive_int,
    tokenizer_source,
)
from uni_agent_gym.config import DEPLOYMENT_TYPES, DeploymentConfig, EnvConfig, GymConfig, LocalDeploymentConfig, load_config, read_config_file
from uni_agent_gym.errors import ConfigError, MissingExtraError, UniAgentGymError

if TYPE_CHECKING:
    from uni_agent_gym.datasets import Task


class DemoFailed(UniAgentGymError):
    """The demo episode ended without the reward it must have."""


class ImageBuildFailed(UniAgentGymError):
    """Some instance images could not be built (each failure was printed)."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """--help with each option's default where it has one to say (not None, an empty list or a flag's off)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.default == []:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Every command and subcommand: defaults in --help, and --verbose after the command's name as well as before."""

    def __init__(self, **kwargs) -> None:
        super().__init__(formatter_class=_HelpFormatter, **kwargs)
        self.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS, help="log debug messages; an error shows its traceback")


def _config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", "-c", action="append", default=[], help="YAML/JSON/TOML config; repeat to layer")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override, e.g. deployment.type=local")
    parser.add_argument("--deployment", choices=list(DEPLOYMENT_TYPES), help="override deployment.type")


def _load(args: argparse.Namespace):
    """The config from --config files (each checked on its own first), --set and --deployment."""
    for path in args.config:
        with argument("--config"):
            read_config_file(path)
    deployment = getattr(args, "deployment", None)
    overrides = list(args.set) + ([f"deployment.type={deployment}"] if deployment else [])
    return load_config(*args.config, overrides=overrides)


def _instances(dataset: str, split: str, dataset_format: str = "auto", cache_dir: str | None = None, **selection) -> list[Task]:
    """The --dataset rows (`toy`: the built-in task's) picked by --instance-ids / --pattern / --slice, as tasks
    of their family; a selection of nothing is an error."""
    from uni_agent_gym.instances import normalise, select
    from uni_agent_gym.toy import dataset_rows

    with argument("--dataset"):
        rows = dataset_rows(dataset, split, cache_dir)
    flags = {"ids": "--instance-ids", "pattern": "--pattern", "slice_spec": "--slice"}
    with argument("/".join(flags[key] for key, value in selection.items() if value is not None) or "--dataset"):
        selected = select(rows, **selection)
    with argument("--dataset"):
        return [normalise(row, dataset_format) for row in selected]


def _environments(path: str | None) -> dict:
    from uni_agent_gym.specs import load_environments

    with argument("--environments"):
        return load_environments(path)


def cmd_demo(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.demo import run_demo

    reward = asyncio.run(run_demo(_load(args), console))
    if reward != 1.0:
        raise DemoFailed(f"the scripted policy should solve the toy task, but the reward is {reward}")


class ConfigContradiction(ConfigError):
    """The training configs contradict each other or verl's schema (each problem was printed)."""


def cmd_check_config(args: argparse.Namespace, console: Console) -> None:
    if args.training:
        given = [name for name, value in (("--config", args.config), ("--set", args.set), ("--deployment", args.deployment)) if value]
        if given:
            raise BadArgument(f"{given[0]}: not used with --training (the run's gym settings are its agent-loop entry's: its settings, "
                              "deployment and overrides; --settings replaces its settings file)")  # fmt: skip
        _check_training(args, console, "--training")
        return
    if args.settings:
        raise BadArgument("--settings: only used with --training (give gym settings to a plain check with --config)")
    config = _load(args)
    console.print_json(json.dumps(config.model_dump(mode="json")))
    console.print("[green]config is valid[/green]")


def _check_training(args: argparse.Namespace, console: Console, toml_argument: str):
    """Load config.toml + agent-loop YAML + gym settings, print what contradicts what; the run if none."""
    from uni_agent_gym.verl.training import check_training, load_training, toml_lines

    if args.settings:
        with argument("--settings"):
            read_config_file(args.settings)
    with argument(toml_argument):
        run = load_training(args.training, settings=args.settings)
    check = check_training(run)
    _print_check(console, check.notes, check.warnings, check.problems)
    if check.additions:
        console.print(f"[yellow]lines to add to {escape(str(args.training))}[/yellow] (what the file lacks; each resolves a problem or warning above):")
        console.print(toml_lines(check.additions), markup=False, highlight=False, soft_wrap=True)
    if check.problems:
        raise ConfigContradiction(f"{len(check.problems)} problem(s) in {args.training} and the configs it names; the first: {check.problems[0]}")
    trainer = "verl fully-async trainer" if run.async_training else "verl PPO trainer"
    console.print(f"[green]training configs are consistent[/green] ({trainer}, agent loop {escape(str(run.loop_yaml))})", soft_wrap=True)
    return run


def _print_check(console: Console, notes: list[str], warnings: list[str], problems: list[str]) -> None:
    for kind, colour, lines in (("note", "cyan", notes), ("warning", "yellow", warnings), ("problem", "red", problems)):
        for line in lines:  # one line each, never cut: a path or a line to copy must survive a pipe
            console.print(f"[{colour}]{kind}:[/{colour}] {escape(line)}", highlight=False, soft_wrap=True)


def cmd_train(args: argparse.Namespace, console: Console) -> None:
    import subprocess
    from pathlib import Path

    args.training = args.config
    output_directory("--output", args.output)
    validations = _validations_file(console, "--validations", args.validations)
    run = _check_training(args, console, "--config")
    if validations is not None:  # every loop of ours reads it from its gym config, on every node: an absolute path
        for entry in run.loop_entries:
            if str(entry.get("_target_", "")).startswith("uni_agent_gym."):
                entry["overrides"] = [*(entry.get("overrides") or []), f"env.validations={validations.path}"]
    if not args.dry_run:
        from uni_agent_gym.verl.training import require_visible_gpus

        require_visible_gpus(run)
    experiment = run.values.get("trainer.experiment_name", "uni-agent-gym")
    from uni_agent_gym.verl.training import faithful_tokenizer

    said = faithful_tokenizer(run, Path(args.output) / str(experiment) / "tokenizer", launch=not args.dry_run)  # as tokenizer.json declares it
    if said:
        console.print(said, markup=False, highlight=False, soft_wrap=True)
    generated, text = run.write_loop_yaml(Path(args.output) / str(experiment))
    console.print(f"agent loop config: {generated}", markup=False, highlight=False, soft_wrap=True)
    if args.dry_run:
        console.print(text.rstrip(), markup=False, highlight=False, soft_wrap=True)
    console.print(run.shell_command(), markup=False, highlight=False, soft_wrap=True)
    if args.dry_run:
        return
    from uni_agent_gym.deployments.docker import RUN_ID_VARIABLE, default_run_id

    os.environ[RUN_ID_VARIABLE] = default_run_id()  # one run id for every process verl starts here
    _print_run_id(console, None)
    returncode = subprocess.call(run.command())
    if returncode:
        raise TrainingFailed(f"verl exited with status {returncode}")


class TrainingFailed(UniAgentGymError):
    """verl's trainer exited with an error (its output is above)."""


def cmd_init(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.verl.from_seed import shipped_files, write_from_seed, write_shipped

    seed = input_directory("--from-seed", args.from_seed) if args.from_seed else None
    output = output_directory("--output", args.output or ("configs-from-seed" if seed else "configs"))
    shipped = None if seed else shipped_files()  # the installation's own: no argument is wrong where it lacks them
    with argument("--from-seed" if seed else "--output"):
        said, check = write_from_seed(seed, output, force=args.force) if seed else write_shipped(shipped, output, force=args.force)
    if check is None:  # no verl here: the gym's settings and deployments only (the note says why)
        _print_check(console, said, [], [])
        console.print(f"[green]wrote the gym's settings and deployments to {escape(str(output))}[/green] (check them: uni-agent-gym check-config "
                      f"-c {escape(str(output / 'settings.json'))})")  # fmt: skip
        return
    _print_check(console, said, check.warnings, check.problems)
    if check.problems:
        raise ConfigContradiction(f"wrote the set to {output}, but {len(check.problems)} problem(s) are left (above); fix them there, "
                                  f"then check it: uni-agent-gym check-config --training {output / 'config.toml'}")  # fmt: skip
    console.print(f"[green]wrote a consistent set to {escape(str(output))}[/green]: config.toml, uni_agent_loop.yaml, settings.json "
                  f"(check it: uni-agent-gym check-config --training {escape(str(output / 'config.toml'))})")  # fmt: skip


def cmd_prepare_data(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.verl.data import by_strength, verl_rows, write_parquet

    output = parquet_file("--output", args.output)  # before the rows load: a wrong name is said at once
    if (args.drop_survivors or args.min_strength is not None) and not args.validations:
        flag = "--drop-survivors" if args.drop_survivors else "--min-strength"
        raise BadArgument(f"{flag}: reads each task's strength from a validations file: give --validations DIR/validation.json "
                          "(`uni-agent-gym validate --output DIR` writes it)")  # fmt: skip
    validations = _validations_file(console, "--validations", args.validations)
    instances = _instances(args.dataset, args.split, ids=args.instance_ids, slice_spec=args.slice)
    # the images of the rollout nodes: docker's
    instances = _consulted(instances, args.validation, args.cache_dir, console, validations, images=True)
    if args.drop_survivors or args.min_strength is not None:
        instances, said = by_strength(instances, validations, drop_survivors=args.drop_survivors, min_strength=args.min_strength)
        for why, ids in (("with survivors (their tests accept a wrong fix)", said["survivors"]), (f"below strength {args.min_strength}", said["below"])):
            if ids:
                console.print(f"left out {len(ids)} task(s) {why}: {_shown_ids(ids)}", markup=False, highlight=False, soft_wrap=True)
        if said["not measured"]:
            console.print(f"kept {len(said['not measured'])} task(s) whose strength was not measured: {_shown_ids(said['not measured'])}",
                          markup=False, highlight=False, soft_wrap=True)  # fmt: skip
        if not instances:
            raise BadArgument("--drop-survivors/--min-strength left no task: lower --min-strength, or strengthen the rows (`validate --strengthen`)")
    path = write_parquet(verl_rows(instances, args.agent_name, validations), output)
    carried = f" (each with its strength from {validations.path})" if validations else ""
    console.print(f"wrote {len(instances)} row{'s' * (len(instances) != 1)} for agent loop {args.agent_name!r} to {path}{carried}",
                  markup=False, highlight=False, soft_wrap=True)  # fmt: skip


def _strength_value(text: str) -> float:
    """argparse type of --min-strength: a share of variants killed, 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expects a strength from 0 to 1 (variants killed / tried), got {text!r}")
    return value


def _shown_ids(ids: list[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _validations_file(console: Console, name: str, path: str | None):
    """The validations file a command reads (None without one), checked before any work and summed up in one line."""
    if not path:
        return None
    from uni_agent_gym.workspaces.validations_file import load

    with argument(name):
        validations = load(path)
    console.print(f"validations: {validations.summary()} in {validations.path}", markup=False, highlight=False, soft_wrap=True)
    return validations


def _consulted(instances: list[Task], mode: str, cache_dir: str, console: Console, validations, images: bool) -> list[Task]:
    """`workspaces.validated.consult` over this machine's store, and the validations file where one is given (its
    verdict of a row counts where this machine does not hold the row's image, or `images` is off)."""
    from uni_agent_gym.workspaces.validated import consult

    if validations is None:
        return consult(instances, mode, cache_dir, _say_validation(console))
    from uni_agent_gym.workspaces.validations_file import unvalidated

    return consult(instances, mode, cache_dir, _say_validation(console), where=f"on this machine or in {validations.path}",
                   find_missing=lambda tasks: unvalidated(tasks, cache_dir, validations, images=images))  # fmt: skip


def cmd_cleanup(args: argparse.Namespace, console: Console) -> None:
    options = {"everything": args.all, "dry_run": args.dry_run}
    if args.deployment == "ray":
        from uni_agent_gym.deployments.ray import cleanup_nodes

        by_node, failed = cleanup_nodes(args.address, args.resource, args.run_id, **options)
        for node, result in sorted(by_node.items()):
            _print_cleanup(console, result, args.dry_run, f"node {node}: ")
        for node, why in sorted(failed.items()):
            console.print(f"node {node}: not cleaned ({why}); run this again once it is back")
        if not by_node and not failed:
            console.print(f"no alive node offers {args.resource}: nothing to clean")
        if failed:
            raise SystemExit(1)
        return
    from uni_agent_gym.deployments.docker import cleanup

    _print_cleanup(console, cleanup(args.run_id, **options), args.dry_run)


def _print_run_id(console: Console, config) -> None:
    """The run id the containers of this run are labelled with, for `cleanup --run-id` (docker and ray; this
    process's where there is no config)."""
    from uni_agent_gym.deployments.docker import default_run_id
    from uni_agent_gym.deployments.sites import site_of

    run_id = default_run_id() if config is None else site_of(config.deployment).run_id()
    if run_id:
        console.print(f"run id {run_id} (its containers: uni-agent-gym cleanup --run-id {run_id})", markup=False, highlight=False, soft_wrap=True)


def _print_cleanup(console: Console, result, dry_run: bool, where: str = "") -> None:
    removed = result.removed
    console.print(f"{where}{'would remove' if dry_run else 'removed'} {len(removed)} container(s)" + (f": {', '.join(removed)}" if removed else ""),
                  markup=False, soft_wrap=True)  # fmt: skip
    for name, why in sorted(result.kept.items()):
        console.print(f"{where}kept {name}: {why}", markup=False, soft_wrap=True)


def cmd_push_images(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.deployments.registry import push

    for image in args.images:
        push(image, args.registry, log=console.print)


def cmd_bootstrap_base(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.workspaces.base_images import bootstrap_base

    for python in args.python:
        bootstrap_base(python, mirror=args.mirror, force=args.force, log=console.print)


def _run_config(args: argparse.Namespace):
    """The config of a run over instances: files, overrides, then --mirror and --environments (checked)."""
    config = _load(args)
    config.env.mirrors.update(mirror(text) for text in args.mirror)
    if args.environments:
        _environments(args.environments)
        config.env.environments = args.environments
    return config


@contextlib.contextmanager
def _progress(console: Console, label: str, total: int, done: int = 0, counts: str = ""):
    """A live bar with counts (`counts`: those of the `done` ones); yields `advance(counts_text)` to call once per finished instance."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(label, total=total, completed=done, counts=counts)
        yield lambda counts: progress.update(task, advance=1, counts=counts)


def _dataset_tasks(dataset: str, config: GymConfig, ids: list[str] | None = None) -> tuple[dict[str, Task], dict[str, str]]:
    """The --dataset's tasks by id (those `ids` only, where given), and why each row that makes none does not."""
    from uni_agent_gym.eval.grade import dataset_tasks
    from uni_agent_gym.instances import select
    from uni_agent_gym.toy import dataset_rows

    with argument("--dataset"):
        rows = dataset_rows(dataset, config.env.split, config.env.cache_dir)
    if ids:
        with argument("--instance-ids"):
            rows = select(rows, ids=ids)
    with argument("--dataset"):
        return dataset_tasks(rows, config.env.dataset_format)


def cmd_grade(args: argparse.Namespace, console: Console) -> None:
    import time
    from pathlib import Path

    from uni_agent_gym.eval.grade import ERROR_STATUSES, check_graded, grade_predictions, read_predictions, summary_line
    from uni_agent_gym.rewards.swebench import SWEBenchReward

    config = _run_config(args)
    rows, unloadable = _dataset_tasks(args.dataset, config)  # a row that makes no task costs only the predictions for it
    with argument("--predictions"):
        predictions = read_predictions(args.predictions)
    if args.instance_ids:
        chosen = [p for p in predictions if p.get("instance_id") in set(args.instance_ids)]
        if not chosen:
            raise BadArgument(f"--instance-ids {' '.join(args.instance_ids)}: none of the {len(predictions)} predictions in {args.predictions} is for them")
        predictions = chosen
    output_directory("--output", args.output)
    reward = SWEBenchReward(config.reward, _environments(config.env.environments), gym=config)
    run_id = args.run_id or time.strftime("%Y%m%d-%H%M%S")
    counts = {"resolved": 0, "errors": 0}
    with _progress(console, "grading", len(predictions)) as advance:

        def on_result(result: dict) -> None:
            counts["resolved"] += result["status"] == "resolved"
            counts["errors"] += result["status"] in ERROR_STATUSES
            advance(f"resolved {counts['resolved']}  errors {counts['errors']}")

        summary, path = asyncio.run(
            grade_predictions(predictions, rows, reward, Path(args.output), run_id, workers=args.workers,
                              retry_errors=args.retry_errors, on_result=on_result, unloadable=unloadable)  # fmt: skip
        )
    console.print(summary_line(summary, path))
    check_graded(summary)


def cmd_validate(args: argparse.Namespace, console: Console) -> None:
    import json

    from rich.table import Table

    from uni_agent_gym.rewards.swebench import SWEBenchReward
    from uni_agent_gym.validation import ValidationFailed, strength_cell, summary, table_reason, validate_tasks, write_strengthened

    config = _run_config(args)
    tasks, unloadable = _dataset_tasks(args.dataset, config, args.instance_ids)
    tasks = list(tasks.values())
    output = output_directory("--output", args.output)
    reward = SWEBenchReward(config.reward, _environments(config.env.environments), gym=config)
    counts = {"validated": 0, "failed": 0}
    with _progress(console, "validating", len(tasks)) as advance:

        def on_result(result) -> None:
            counts["validated" if result.validated else "failed"] += 1
            advance(f"validated {counts['validated']}  failed {counts['failed']}")

        results = asyncio.run(validate_tasks(tasks, reward, workers=args.workers, on_result=on_result, variants=args.variants,
                                             variant_seconds=args.variant_seconds))  # fmt: skip
    report = summary(results, unloadable)
    output.mkdir(parents=True, exist_ok=True)
    path = output / "validation.json"
    path.write_text(json.dumps(report, indent=1))
    table = Table("instance", "language", "result", "why", "strength", "seconds")
    for result in results:
        table.add_row(result.instance_id, result.language or "", "validated" if result.validated else "[red]failed[/red]",
                      escape(table_reason(result)), strength_cell(result), f"{result.seconds:.0f}")  # fmt: skip
    console.print(table)
    weak = report["strength"]["with_survivors"]
    if report["strength"]["measured"]:
        console.print(f"strength: {len(weak)} of {report['strength']['measured']} task(s) accept a wrong variant of their gold"
                      f"{' (' + ', '.join(weak[:10]) + ')' if weak else ''}", highlight=False)  # fmt: skip
    if args.strengthen:
        written = write_strengthened(args.strengthen, tasks, results)
        console.print(f"{written} row(s) with the tests that kill their survivors added to their lists: {args.strengthen}", highlight=False)
    for instance_id, why in unloadable.items():
        console.print(f"{instance_id}: makes no task: {escape(why)}", highlight=False)
    console.print(f"validated {report['validated']} of {report['tasks']} task(s); report: {path}", highlight=False)
    if report["failed"] or unloadable:
        raise ValidationFailed(f"{report['failed']} task(s) failed their self-check{f' and {len(unloadable)} row(s) make no task' if unloadable else ''}: "
                               f"{', '.join((report['failed_ids'] + sorted(unloadable))[:10])} (why: {path})")  # fmt: skip


def cmd_ping(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.agent.model import ChatModel

    config = _load(args)

    async def ping() -> tuple[str, float]:
        model = ChatModel(config.model)
        try:
            return await model.ping()
        finally:
            await model.close()

    reply, seconds = asyncio.run(ping())
    console.print(f"{config.model.model_name} at {config.model.base_url} answered in {seconds:.2f} s: {reply.strip()[:200]!r}")


def cmd_probe(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.toolcalls import load_tokenizer
    from uni_agent_gym.verl.probe import ProbeFailed, failed_summary, run_probe

    source = tokenizer_source("--tokenizer", args.tokenizer)
    config = _load(args)
    said = Console(stderr=True) if args.json else console
    if "deployment" in config.model_fields_set:
        said.print(f"episode sandbox: {config.deployment.type} (from --config/--set/--deployment)", highlight=False, soft_wrap=True)
    else:
        config = config.model_copy(update={"deployment": LocalDeploymentConfig()})
        said.print("episode sandbox: local (probe's default: nothing to build; --deployment or a config's deployment chooses another)", highlight=False, soft_wrap=True)
    with argument("--tokenizer"):
        tokenizer = load_tokenizer(source)
    from uni_agent_gym.deployments.sites import site_of

    if site_of(config.deployment).engine_here:
        from uni_agent_gym.demo import prepare_deployment

        config = asyncio.run(prepare_deployment(config, said))
    sections = run_probe(tokenizer, config)
    if args.json:
        print(json.dumps({"tokenizer": source, "ok": all(s.ok for s in sections),
                          "sections": [{"name": s.name, "ok": s.ok, "lines": s.lines, **s.data} for s in sections]}))  # fmt: skip
    else:
        for section in sections:
            console.print(f"[bold]{section.name}[/bold] {'[green]ok[/green]' if section.ok else '[red]FAILED[/red]'}")
            for line in section.lines:
                console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    if not all(section.ok for section in sections):
        raise ProbeFailed(failed_summary(sections))


def _validated(instances: list[Task], mode: str, deployment: DeploymentConfig, cache_dir: str, console: Console, validations=None) -> list[Task]:
    """The instances a run takes under `validation: mode` (`workspaces.validated.consult`): images are what validate,
    so only docker and ray sandboxes are checked, unless a validations file gives each row's verdict."""
    from uni_agent_gym.deployments.sites import site_of

    images = site_of(deployment).containers
    if not images and validations is None:
        if mode == "require":
            raise BadArgument(f"validation: require: only images built here record a validated environment; a {deployment.type} deployment has "
                              "none (docker or ray), or give a validations file (--validations: `validate`'s validation.json)")  # fmt: skip
        return instances
    return _consulted(instances, mode, cache_dir, console, validations, images)


def _say_validation(console: Console):
    return lambda message: console.print(f"[yellow]{escape(message)}[/yellow]", highlight=False)


def cmd_eval(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.eval.run import check_graded, finished_trajectories, record_model, run_eval, summary_line

    config = _run_config(args)
    if args.validations:
        config.env.validations = os.path.abspath(os.path.expanduser(args.validations))
    validations = _validations_file(console, "--validations" if args.validations else "env.validations", config.env.validations)
    instances = _instances(args.dataset, config.env.split, config.env.dataset_format, config.env.cache_dir, ids=args.instance_ids, slice_spec=args.slice)
    output = output_directory("--output", args.output)
    instances = _validated(instances, config.env.validation or "warn", config.deployment, config.env.cache_dir, console, validations)
    _print_run_id(console, config)
    record_model(output, config.model, args.allow_model_change)  # another model's results there: refused before the bar
    counts = {"resolved": 0, "errors": 0, "tokens": 0}

    def counted(trajectory: dict) -> str:
        counts["resolved"] += trajectory["resolved"]
        counts["errors"] += trajectory["exit_reason"] == "env_error"
        counts["tokens"] += trajectory["usage"]["prompt_tokens"] + trajectory["usage"]["completion_tokens"]
        return f"resolved {counts['resolved']}  errors {counts['errors']}  tokens {counts['tokens']}"

    skipped = finished_trajectories(instances, output, args.retry_errors)
    if skipped:  # the bar's counts are the whole run's, as the last line's
        console.print(f"{len(skipped)} of {len(instances)} instance(s) already done in {output}, skipped")
    text = ""
    for trajectory in skipped:
        text = counted(trajectory)
    with _progress(console, "eval", len(instances), len(skipped), text) as advance:
        report = asyncio.run(run_eval(instances, config, output, workers=args.workers, retry_errors=args.retry_errors,
                                      allow_model_change=args.allow_model_change, on_done=lambda t: advance(counted(t))))  # fmt: skip
    console.print(f"{summary_line(report)}; predictions: {output / 'predictions.jsonl'}; report: {output / 'report.md'}")
    check_graded(report)


def cmd_build_images(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.toy import is_toy
    from uni_agent_gym.workspaces.image_builder import build_instance_images

    config = _load(args)
    config.env.mirrors.update(mirror(text) for text in args.mirror)
    rows = _instances(args.dataset, "test", config.env.dataset_format, ids=args.instance_ids, pattern=args.pattern, slice_spec=args.slice)
    environments = _environments(args.environments)  # a bad argument is one, whatever the rows
    for task in filter(is_toy, rows):
        console.print(f"{task.instance_id}: the toy needs no image: its tests need only python3, which the deployment's base image has "
                      "(on docker the repository goes into a workspace image of its own at the first reset)")  # fmt: skip
    rows = [task for task in rows if not is_toy(task)]
    if not rows:
        return
    names, failures = asyncio.run(build_instance_images(rows, config, environments, force=args.force, workers=args.workers, log=console.print))
    console.print(f"{len(names)} image(s) ready, {len(failures)} failed")
    if failures:
        raise ImageBuildFailed("failed: " + ", ".join(failures))


def cmd_datasets(args: argparse.Namespace, console: Console) -> None:
    from rich.table import Table

    from uni_agent_gym.dataset_summary import canaries_cell, family_table, images_cell, images_notes, summarise
    from uni_agent_gym.toy import dataset_rows

    if not args.dataset:
        table = Table("family", "recognised by", "images", "images build (offline)", title="dataset families", show_lines=True)
        for line in family_table():
            table.add_row(*line.values())
        _print_table(console, table)
        return
    config = _run_config(args)
    with argument("--dataset"):
        rows = dataset_rows(args.dataset, args.split, config.env.cache_dir)
    lines = summarise(rows, config, _environments(config.env.environments), config.env.dataset_format)
    table = Table("family", "repository", "language", "rows", "images here", "buildable offline", "canaries", "why not",
                  title=f"{args.dataset}: {len(rows)} row{'s' * (len(rows) != 1)}")  # fmt: skip
    for line in lines:
        why = "; ".join(f"{count}: {reason}" for reason, count in line.reasons.most_common(3))
        table.add_row(line.family, line.repo, line.language, str(line.rows), images_cell(line), str(line.buildable), canaries_cell(line), escape(why))
    _print_table(console, table)
    for note in images_notes(lines):
        console.print(note, highlight=False)


def _print_table(console: Console, table) -> None:
    """A table as wide as the terminal, or piped as wide as COLUMNS (else 120): `main` lets a pipe's lines run
    unbounded, which would make the table as wide as its longest cells. Long cells wrap, never cut (image names)."""
    for column in table.columns:
        column.overflow = "fold"
    columns = os.environ.get("COLUMNS", "")
    console.print(table, width=None if console.is_terminal else int(columns) if columns.isdigit() else 120)


def cmd_gateway_serve(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.gateway.serve import load_tokenizer, serve
    from uni_agent_gym.gateway.server import listening_socket
    from uni_agent_gym.gateway.session import Limits

    output = output_file("--output", args.output)
    source = tokenizer_source("--tokenizer", args.tokenizer)
    limits = Limits(max_model_len=args.max_model_len, max_prompt_length=args.max_prompt_length,
                    max_response_length=args.max_response_length, max_tokens_per_turn=args.max_tokens_per_turn)  # fmt: skip
    sock = listening_socket(args.host, args.port)
    with argument("--tokenizer"):
        tokenizer = load_tokenizer(source)
    serve(sock=sock, tokenizer=tokenizer, backends=args.backend, api=args.backend_api, backend_model=args.backend_model,
          output=output, limits=limits, model_name=args.model_name, log=console.print)  # fmt: skip


def cmd_view(args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.viewer.command import run

    run(args, console)


def _version() -> str:
    """The installed distribution's version (pyproject.toml's: one place says it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("uni-agent-gym")
    except PackageNotFoundError:  # a source tree on sys.path that pip never installed
        return "(not installed: pip install -e . in a checkout)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="uni-agent-gym", description="SWE-bench environment and reward gym for agentic RL")
    parser.set_defaults(verbose=False)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)  # subcommands are _Parsers too (argparse uses the parent's class)

    demo = commands.add_parser("demo", help="run the main job on a built-in default task")
    _config_arguments(demo)
    demo.set_defaults(func=cmd_demo)

    check = commands.add_parser("check-config", help="validate configs together and print the result (secrets hidden)")
    _config_arguments(check)
    check.add_argument("--training", metavar="TOML", help="check a training run: verl config.toml, its agent-loop YAML and gym settings")
    check.add_argument("--settings", help="gym settings replacing the agent-loop YAML's own (with --training)")
    check.set_defaults(func=cmd_check_config)

    train = commands.add_parser("train", help="launch verl training with UniAgentLoop (checks the configs first)")
    train.add_argument("--config", required=True, metavar="TOML", help="verl side: configs/config.toml")
    train.add_argument("--settings", help="gym settings (default: the agent-loop YAML's own)")
    train.add_argument("--output", default="runs/train", help="where the resolved agent-loop YAML is written")
    train.add_argument("--dry-run", action="store_true", help="check and print the command, do not run it")
    train.add_argument("--validations", metavar="FILE", help="`validate`'s report (DIR/validation.json), as env.validations of every agent "
                       "loop: reward reports carry each task's verdict and strength, and verl's metrics the share of rewards from weak tasks")
    train.set_defaults(func=cmd_train)

    init = commands.add_parser("init", help="write a complete, consistent config set: the shipped one, or one from the seed article's three files")
    init.add_argument("--from-seed", metavar="DIR", help="the article's config.toml, uni_agent_loop.yaml and settings.json (default: the shipped set)")
    init.add_argument("--output", help="where the set is written (default: configs-from-seed with --from-seed, else configs, where the docs' commands read it)")
    init.add_argument("--force", action="store_true", help="replace files of that name in --output")
    init.set_defaults(func=cmd_init)

    prepare = commands.add_parser("prepare-data", help="SWE-bench rows to a verl parquet routed to UniAgentLoop")
    prepare.add_argument("--dataset", required=True, help="rows: .json/.jsonl/.parquet file or a datasets name")
    prepare.add_argument("--split", default="test", help="dataset split (datasets names)")
    prepare.add_argument("--instance-ids", nargs="+", help="only these instances")
    prepare.add_argument("--slice", help="only this slice of the rows, e.g. 0:10")
    prepare.add_argument("--agent-name", default="uni_agent", help="the agent loop's name in the agent-loop YAML")
    prepare.add_argument("--output", required=True, help="parquet file to write, e.g. data/swe_train.parquet")
    prepare.add_argument("--validation", choices=["skip", "warn", "require"], default="skip",
                         help="tasks whose image has not passed `validate` on this machine: require leaves them out, warn names them")
    prepare.add_argument("--cache-dir", default=EnvConfig.model_fields["cache_dir"].default, help="where `validate` remembered its results (env.cache_dir)")
    prepare.add_argument("--validations", metavar="FILE", help="`validate`'s report (DIR/validation.json): each row carries its task's "
                         "strength (extra_info.strength), and its verdicts count for --validation where this machine lacks the image")
    prepare.add_argument("--drop-survivors", action="store_true", help="leave out the tasks whose tests accepted a wrong variant of their gold (needs --validations)")
    prepare.add_argument("--min-strength", type=_strength_value, metavar="S",
                         help="leave out the tasks whose strength (variants killed / tried) is below S, 0 to 1 (needs --validations)")
    prepare.set_defaults(func=cmd_prepare_data)

    datasets = commands.add_parser("datasets", help="the dataset families, or what a dataset holds (rows per family and repository, images, buildable offline)")
    datasets.add_argument("--dataset", help="rows: .json/.jsonl/.parquet file, a directory of them, a datasets name, or toy (without it: the families)")
    datasets.add_argument("--split", default="test", help="dataset split (datasets names)")
    datasets.add_argument("--environments", help="per-instance exact environments (JSON; see uni_agent_gym.specs)")
    datasets.add_argument("--mirror", action="append", default=[], metavar="REPO=PATH", help="repository mirror")
    datasets.add_argument("--config", "-c", action="append", default=[], help="config file(s) (env.mirrors, env.dataset_format)")
    datasets.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    datasets.set_defaults(func=cmd_datasets)

    cleanup = commands.add_parser("cleanup", help="remove the containers uni-agent-gym runs that ended left (a live run's are kept)")
    cleanup.add_argument("--run-id", help="every container of this run (live or not)")
    cleanup.add_argument("--all", action="store_true", help="every uni-agent-gym container, a live run's too")
    cleanup.add_argument("--dry-run", action="store_true", help="list what would be removed and kept; remove nothing")
    cleanup.add_argument("--deployment", choices=["docker", "ray"], default="docker", help="this machine's engine (docker), or every node's of a Ray cluster (ray)")
    cleanup.add_argument("--address", default="auto", help="with --deployment ray: the cluster's head, HOST:PORT")
    cleanup.add_argument("--resource", default="uni_agent_gym_sandbox", help="with --deployment ray: the nodes offering this resource are cleaned")
    cleanup.set_defaults(func=cmd_cleanup)

    ping = commands.add_parser("ping", help="send one tiny request to the configured model and print reply and latency")
    _config_arguments(ping)
    ping.set_defaults(func=cmd_ping)

    probe = commands.add_parser("probe", help="check offline that the gym records a tokenizer's chat template correctly (boundary, cache, episode)")
    probe.add_argument("--tokenizer", required=True, metavar="PATH", help="the model's tokenizer: a directory or a hub name")
    probe.add_argument("--json", action="store_true", help="print the sections as one JSON object")
    _config_arguments(probe)
    probe.set_defaults(func=cmd_probe)

    evaluate = commands.add_parser("eval", help="run the ReAct agent over SWE-bench instances and report")
    _config_arguments(evaluate)
    evaluate.add_argument("--dataset", required=True, help="rows: .json/.jsonl/.parquet file, a datasets name, or toy (the built-in task)")
    evaluate.add_argument("--instance-ids", nargs="+", help="only these instances")
    evaluate.add_argument("--slice", help="only this slice of the rows, e.g. 0:10")
    evaluate.add_argument("--workers", type=positive_int, default=1, help="episodes at once")
    evaluate.add_argument("--output", default="runs/eval", help="directory for predictions, trajectories and report")
    evaluate.add_argument("--environments", help="per-instance exact environments (JSON; see uni_agent_gym.specs)")
    evaluate.add_argument("--mirror", action="append", default=[], metavar="REPO=PATH", help="repository mirror")
    evaluate.add_argument("--retry-errors", action=argparse.BooleanOptionalAction, default=True,
                          help="play again instances whose sandbox failed (env_error) on an earlier run into --output")  # fmt: skip
    evaluate.add_argument("--allow-model-change", action="store_true",
                          help="resume into an --output that holds another model's results (the report then names both)")  # fmt: skip
    evaluate.add_argument("--validations", metavar="FILE", help="`validate`'s report (DIR/validation.json; env.validations): reward reports "
                          "carry each task's verdict and strength, and the report a resolved rate over the tasks with no survivor")
    evaluate.set_defaults(func=cmd_eval)

    grade = commands.add_parser("grade", help="grade a predictions.jsonl (official harness format) in fresh sandboxes")
    _config_arguments(grade)
    grade.add_argument("--dataset", required=True, help="rows: .json/.jsonl/.parquet file, a datasets name, or toy (the built-in task)")
    grade.add_argument("--predictions", required=True, help="predictions.jsonl: instance_id, model_name_or_path, model_patch")
    grade.add_argument("--instance-ids", nargs="+", help="only these predictions")
    grade.add_argument("--workers", type=positive_int, default=1, help="instances graded at once")
    grade.add_argument("--output", default="runs/grade", help="directory for per-instance reports and the summary")
    grade.add_argument("--run-id", help="name of this run (re-use it to resume); a timestamp by default")
    grade.add_argument("--environments", help="per-instance exact environments (JSON; see uni_agent_gym.specs)")
    grade.add_argument("--mirror", action="append", default=[], metavar="REPO=PATH", help="repository mirror")
    grade.add_argument("--retry-errors", action=argparse.BooleanOptionalAction, default=True,
                       help="grade again instances of this --run-id whose grading failed with infra_error")  # fmt: skip
    grade.set_defaults(func=cmd_grade)

    validate = commands.add_parser("validate", help="the gold self-check: each task's gold patch resolves, its test patch alone does not")
    _config_arguments(validate)
    validate.add_argument("--dataset", required=True, help="rows: .json/.jsonl/.parquet file, a datasets name, or toy (the built-in task)")
    validate.add_argument("--instance-ids", nargs="+", help="only these tasks")
    validate.add_argument("--workers", type=positive_int, default=1, help="tasks checked at once (three gradings each)")
    validate.add_argument("--output", default="runs/validate", help="directory for the report (validation.json)")
    validate.add_argument("--environments", help="per-instance exact environments (JSON; see uni_agent_gym.specs)")
    validate.add_argument("--mirror", action="append", default=[], metavar="REPO=PATH", help="repository mirror")
    validate.add_argument("--variants", type=non_negative_int, default=8,
                          help="the strength of each task's tests: at most N wrong variants of its gold graded (0: none)")
    validate.add_argument("--variant-seconds", type=positive_float, default=900.0, help="time for one task's variants (those left are skipped)")
    validate.add_argument("--strengthen", metavar="FILE", help="write the rows again (JSONL), each with the tests its test files hold that "
                          "kill its surviving variants (gold passes them) added to PASS_TO_PASS")
    validate.set_defaults(func=cmd_validate)

    images = commands.add_parser("images", help="build images without a registry, and push them to one").add_subparsers(dest="images_command", required=True)
    base = images.add_parser("bootstrap-base", help="minimal Debian image with a given Python, via debootstrap")
    base.add_argument("--python", action="append", required=True, help="3.9, 3.11 or 3.13; repeat for several")
    base.add_argument("--mirror", type=debian_mirror, help="Debian mirror URL (default: the one apt on this host uses)")
    base.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    base.set_defaults(func=cmd_bootstrap_base)
    build = images.add_parser("build", help="SWE-bench instance images, offline (wheelhouse on the host, no network in the build)")
    build.add_argument("--dataset", required=True, help="rows: .json/.jsonl/.parquet file or a datasets name")
    build.add_argument("--instance-ids", nargs="+", help="only these instances")
    build.add_argument("--pattern", help="only instance ids matching this regex")
    build.add_argument("--slice", help="only this slice of the rows, e.g. 0:10")
    build.add_argument("--environments", help="per-instance exact environments (JSON; see uni_agent_gym.specs)")
    build.add_argument("--mirror", action="append", default=[], metavar="REPO=PATH", help="repository mirror, e.g. pallets/flask=/src/flask")
    build.add_argument("--config", "-c", action="append", default=[], help="config file(s) (env.mirrors, env.cache_dir)")
    build.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    build.add_argument("--force", action="store_true", help="rebuild images that exist")
    build.add_argument("--workers", type=positive_int, default=1, help="images built at once (downloads stay one at a time)")
    build.set_defaults(func=cmd_build_images)
    push = images.add_parser("push", help="push images from this engine to a registry the Ray nodes pull from (deployment.registry)")
    push.add_argument("--registry", required=True, type=registry_address, metavar="HOST:PORT", help="the registry (an image goes there as HOST:PORT/<its name>)")
    push.add_argument("images", nargs="+", metavar="IMAGE", help="images to push: base, environment and instance images alike")
    push.set_defaults(func=cmd_push_images)

    gateway = commands.add_parser("gateway", help="OpenAI/Anthropic-compatible gateway that records token-exact trajectories")
    gateway_commands = gateway.add_subparsers(dest="gateway_command", required=True)
    serve = gateway_commands.add_parser("serve", help="serve any harness from vLLM/SGLang servers, chains to JSONL")
    serve.add_argument("--backend", action="append", required=True, type=http_url, metavar="URL",
                       help="inference server (vLLM or SGLang); repeat for several (a session sticks to one)")  # fmt: skip
    serve.add_argument("--backend-api", choices=["vllm", "sglang"], default="vllm", help="the servers' token-id API")
    serve.add_argument("--backend-model", help="model name the vLLM servers serve (default: their first /v1/models)")
    serve.add_argument("--tokenizer", required=True, metavar="PATH", help="the served model's tokenizer: a directory or a hub name")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8100, help="port to listen on")
    serve.add_argument("--output", default="runs/gateway/trajectories.jsonl", help="JSONL file each closed session's chains are appended to")
    serve.add_argument("--model-name", default="policy", help="model name the gateway answers to")
    serve.add_argument("--max-model-len", type=positive_int, default=32768, help="tokens per chain, prompt and response")
    serve.add_argument("--max-prompt-length", type=positive_int, default=16384, help="tokens of a chain's first prompt")
    serve.add_argument("--max-response-length", type=positive_int, default=16384, help="tokens after a chain's first prompt")
    serve.add_argument("--max-tokens-per-turn", type=positive_int, default=4096, help="tokens one request may sample")
    serve.set_defaults(func=cmd_gateway_serve)

    view = commands.add_parser("view", help="trajectories as the model and trainer saw them: one HTML page, or --serve for a run of any size")
    view.add_argument("path", metavar="PATH", help="an eval run or grade output directory, a rollout.trajectory_dir, a trajectory .json, a gateway or token-record .jsonl")
    view.add_argument("--output", help="HTML file to write (default: PATH/view.html for a directory, else beside the file)")
    view.add_argument("--tokenizer", metavar="DIR", help="a local tokenizer directory: token texts of records without them, and message spans from its chat template for the mask check")
    view.add_argument("--max-page-mb", type=positive_int, default=100, help="refuse a page of more than this many MB of records (use --serve)")
    view.add_argument("--serve", action="store_true", help="serve a web app instead of writing a page: an index beside the records, updated as they land")
    view.add_argument("--host", default="127.0.0.1", help="address for --serve (127.0.0.1: this machine only)")
    view.add_argument("--port", type=int, default=8010, help="port for --serve, 0: any free port")
    view.set_defaults(func=cmd_view)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console()
    if not console.is_terminal:  # a pipe or a file: nothing is wrapped or cut (names, paths, lines to copy)
        console.width = 10_000
    try:
        try:
            args.func(args, console)
        except ModuleNotFoundError as exc:  # an optional dependency: say which extra installs it
            command = " ".join(filter(None, (args.command, getattr(args, "images_command", None), getattr(args, "gateway_command", None))))
            raise MissingExtraError.of(exc, command) or exc
    except (UniAgentGymError, OSError) as exc:  # a bad input or an unusable machine: one line, the trace with -v
        if args.verbose:
            traceback.print_exc()
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: sandboxes released, finished results kept (re-run to resume)[/yellow]")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
