"""`uni-agent-gym view PATH`: a single HTML file for a few trajectories, or `--serve` for a run of any size.

A page embeds every record it shows, so past `--max-page-mb` of records (counted on disk, before anything
is read) it is refused with the `--serve` line to run instead: a training run's 100,000 records would be
gigabytes no browser opens.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from uni_agent_gym.arguments import BadArgument, argument, output_file, tokenizer_source
from uni_agent_gym.viewer.records import ViewerInputError, check_path, load, load_tokenizer, record_files


def run(args: argparse.Namespace, console: Console) -> None:
    """The `view` subcommand (its arguments are in cli.py)."""
    path = Path(args.path)
    tokenizer_dir = _tokenizer_dir(args.tokenizer)
    if args.serve:
        _serve(path, tokenizer_dir, args, console)
    else:
        _write_page(path, tokenizer_dir, args, console)


def _tokenizer_dir(text: str | None) -> Path | None:
    if not text:
        return None
    source = Path(tokenizer_source("--tokenizer", text)).expanduser()
    if not source.is_dir():
        raise BadArgument(f"--tokenizer: {text} is not a directory here (only a local tokenizer directory is read)")
    return source


def _tokenizer(directory: Path | None) -> Any:
    if directory is None:
        return None
    with argument("--tokenizer"):
        return load_tokenizer(directory)


def _write_page(path: Path, tokenizer_dir: Path | None, args: argparse.Namespace, console: Console) -> None:
    from uni_agent_gym.viewer.html import write_html

    default = path / "view.html" if path.is_dir() else path.with_name(path.stem + ".view.html")
    output = output_file("--output", args.output or str(default))
    with argument("PATH"):
        files = record_files(path)
    size = sum(file.stat().st_size for file in files)
    if size > args.max_page_mb * 1_000_000:
        raise ViewerInputError(
            f"{path} holds {size / 1e6:,.0f} MB of records in {len(files):,} file(s): a page embeds them all and past "
            f"--max-page-mb {args.max_page_mb} no browser opens it well; serve them instead: uni-agent-gym view {path} --serve"
        )
    problems: list[str] = []
    with argument("PATH"):
        records = load(path, problems)
    tokenizer = _tokenizer(tokenizer_dir)
    if tokenizer is not None:
        from uni_agent_gym.viewer.records import add_token_texts

        add_token_texts(records, tokenizer)
    for problem in problems:
        console.print(f"[yellow]skipped:[/yellow] {escape(problem)}", highlight=False, soft_wrap=True)
    output = write_html(records, output, str(path), problems, tokenizer)
    console.print(f"{len(records)} trajector{'y' if len(records) == 1 else 'ies'}: {output}", highlight=False, soft_wrap=True)


def _serve(path: Path, tokenizer_dir: Path | None, args: argparse.Namespace, console: Console) -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise BadArgument("--serve: needs fastapi and uvicorn: pip install -e '.[view]' (or '.[verl]')") from None
    from uni_agent_gym.viewer.index import Index
    from uni_agent_gym.viewer.server import listening_socket, serve

    with argument("PATH"):
        check_path(path)  # what is wrong with PATH, before anything starts
    if not 0 <= args.port <= 65535:
        raise BadArgument(f"--port: expects a port number from 0 to 65535 (0: any free port), got {args.port}")
    sock = listening_socket(args.host, args.port)
    try:
        tokenizer = _tokenizer(tokenizer_dir)
        index = Index(path, tokenizer=tokenizer, checks_key=str(tokenizer_dir or ""))
        console.print(f"index: {index.database}", highlight=False, soft_wrap=True)

        def progress(done: int, total: int) -> None:
            console.print(f"indexing: {done:,} of {total:,} files read", highlight=False)

        read = index.update(progress)
        total, skipped = index.query("SELECT (SELECT COUNT(*) FROM trajectories), (SELECT COUNT(*) FROM problems)")[0]
        console.print(f"{total:,} trajector{'y' if total == 1 else 'ies'} ({read:,} file(s) read now, {skipped:,} skipped)", highlight=False)
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            console.print(f"[yellow]note:[/yellow] serving on {args.host}: anyone who reaches this machine can read these records")
        serve(sock, index, str(path), tokenizer, lambda line: console.print(line, highlight=False, soft_wrap=True))
    finally:
        sock.close()
