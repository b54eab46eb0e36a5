"""Arguments of `coder-tui map`, `coder-tui explore` and `coder-tui tasks` (argparse only: the
work loads after parsing, in agent.frontends.knowledge)."""

from __future__ import annotations

import argparse
import sys

from tui.cliargs import MODES, connection_options, workspace_option

HELP = """  coder-tui map [DIR | --github R]
                               build or refresh the codebase map (`coder-tui map --help`)
  coder-tui explore [DIR | --github R]
                               keep learning the repository step by step (`coder-tui explore --help`)
  coder-tui tasks [run-due | cancel ID]
                               list scheduled tasks, or run the due ones (for cron or a systemd timer)
"""


def _github(parser: argparse.ArgumentParser, what: str, clone: str) -> None:
    parser.add_argument("--github", metavar="OWNER/REPO[@REF]", help=what)
    parser.add_argument("--clone", action="store_true", help=f"with --github: {clone}")


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workspace", nargs="?", default=".", metavar="DIR", help="folder (default: .)")
    _github(parser, "a GitHub repository, read through the API", "use the cached blobless clone")
    connection_options(parser, "litellm model string (summaries use small_model from the config when set)",
                       reasoning=False)
    parser.add_argument("--json", action="store_true", help="one JSON event per line on stdout, nothing else")


def map_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui map", description=(
            "Build or refresh the codebase map: every file's definitions and references (tree-sitter), files "
            "ranked by how much the code refers to them, and an AI summary per file from the small model. "
            "Unchanged files are never summarised twice. Says beforehand how many files will be summarised "
            "and roughly what it costs. Exit codes: 0 done, 1 stopped or some files failed, 2 usage error."))
    _target(parser)
    parser.add_argument("--no-summaries", action="store_true", help="structure and symbols only (no model calls)")
    parser.add_argument("--max-cost", type=float, metavar="USD", help="stop cleanly once this much was spent")
    return parser


def explore_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui explore", description=(
            "Explore the repository one step at a time: the root and important folders first, then "
            "unsummarised files, most referenced first. Durable: stop or kill it at any point and the next "
            "start continues where it stopped. Runs due scheduled tasks between steps. On GitHub it waits "
            "out rate limits. Ctrl+C stops after the current step."))
    _target(parser)
    parser.add_argument("--interval", type=float, default=120.0, metavar="SECONDS",
                        help="pause between steps (default: 120)")
    parser.add_argument("--until-done", action="store_true", help="end when everything is current (default: idle)")
    return parser


def tasks_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui tasks", description=(
            "List the workspace's scheduled tasks, cancel one, or run the due ones (`run-due`) as recorded "
            "headless sessions; run-due is what a cron job or systemd timer calls, `worker` runs them as "
            "they come due until Ctrl+C, and `install` writes a systemd user timer (or with --cron a crontab "
            "line) that calls run-due, after showing it. Tasks run unattended: in "
            "ask mode their edits and commands are denied, so use --mode allow or plan."))
    parser.add_argument("action", nargs="?", choices=("list", "run-due", "cancel", "worker", "install"),
                        default="list")
    parser.add_argument("task_id", nargs="?", metavar="ID", help="with cancel: the task id")
    workspace_option(parser)
    _github(parser, "the tasks of a GitHub repository", "run in the cached clone")
    parser.add_argument("--status", choices=("pending", "in-progress", "completed", "failed", "cancelled"),
                        metavar="STATUS", help="list only tasks with this status: pending, in-progress, "
                                               "completed, failed or cancelled")
    parser.add_argument("--mode", choices=MODES, help="approval mode for tasks run now")
    connection_options(parser, reasoning=False)
    parser.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    parser.add_argument("--interval", type=float, default=60.0, metavar="SECONDS",
                        help="with worker: the longest wait between looks at the task list (default: 60)")
    parser.add_argument("--every", type=int, default=10, metavar="MINUTES",
                        help="with install: how often run-due runs (default: 10)")
    parser.add_argument("--cron", action="store_true", help="with install: a crontab line instead of a systemd timer")
    parser.add_argument("--yes", action="store_true", help="with install: write without asking")
    parser.add_argument("--fleet", action="store_true", help="with run-due or worker: run the due tasks on the "
                        "fleet's workers (`coder-tui fleet --help`) instead of here")
    return parser


def cmd_map(argv: list[str]) -> int:
    options = map_parser().parse_args(argv)
    from agent.frontends.knowledge import main, run_map

    return main(run_map, options)


def cmd_explore(argv: list[str]) -> int:
    options = explore_parser().parse_args(argv)
    from agent.frontends.knowledge import main, run_explore

    return main(run_explore, options)


def cmd_tasks(argv: list[str]) -> int:
    parser = tasks_parser()
    options = parser.parse_args(argv)
    if options.action == "cancel" and not options.task_id:
        parser.error("cancel needs the task ID")
    from agent.frontends.knowledge import main, run_tasks

    if options.fleet and options.action not in ("run-due", "worker"):
        parser.error("--fleet goes with run-due or worker")
    if options.fleet:
        from agent.frontends import fleettasks

        return main(fleettasks.run_due if options.action == "run-due" else fleettasks.worker, options)
    if options.action == "install":
        from agent.frontends.common import UsageError
        from agent.frontends.taskworker import install

        try:
            return install(options)
        except UsageError as exc:
            print(f"coder-tui: error: {exc}", file=sys.stderr)
            return 2
    if options.action == "worker":
        from agent.frontends.taskworker import run_worker

        return main(run_worker, options)
    return main(run_tasks, options)
