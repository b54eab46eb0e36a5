"""Arguments of `coder-tui fleet` (argparse only: Celery and the agent load after parsing, in
agent.frontends.fleet)."""

from __future__ import annotations

import argparse

from tui.cliargs import MODES, WORKFLOWS, positive

HELP = """  coder-tui fleet worker | run | status | approve
                               the agent over many repositories on Celery workers (`coder-tui fleet --help`)
"""
DESCRIPTION = """Run the agent over many repositories on Celery workers with a Redis broker.

  coder-tui fleet worker                     take jobs and run them, one at a time (start many)
  coder-tui fleet run PROMPT --repos FILE    one job per repository of FILE (or --repos OWNER/*)
  coder-tui fleet status [BATCH]             the batches, or one batch's jobs and outcomes
  coder-tui fleet approve BATCH [JOB|--all]  answer the approvals jobs wait for (ask mode)

The broker is one Redis URL: CODER_TUI_FLEET_BROKER, or `broker` under [fleet] in config.toml.
Model keys and GitHub tokens come from each worker's own environment and config, never through
the broker. See docs/fleet.md.
"""


def _price(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def _worker(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("worker", help="take jobs from the broker and run them", description=(
        "Take jobs from the broker and run each as a recorded session, one at a time, until Ctrl+C (which "
        "lets the current job finish). Start one per job you want running at once, on any machines that "
        "reach the broker. Keys, tokens and the model's endpoint come from this worker's environment and "
        "config; its sandbox and folder trust are those of a local session."))
    parser.add_argument("--name", metavar="NAME", help="the worker's name in status (default: host and pid)")
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "off"), help="shell sandbox of its jobs (as for `run`)")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                        help="Celery's own log level (default: warning)")


def _run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("run", help="start a batch: one job per repository", description=(
        "Start a batch: one job per repository, run by the fleet's workers, and follow it (a bar per state "
        "on a terminal, a line per event otherwise) until every job is done, failed or waits for approval. "
        "GitHub jobs publish their edits as one commit on the branch coder-tui/fleet-BATCH (--pr also "
        "opens a pull request); folder jobs edit the folder. Exit codes: 0 all done, 1 a job failed, 2 "
        "usage or broker error, 3 jobs wait for approval, 130 Ctrl+C (the batch goes on)."))
    parser.add_argument("prompt", nargs="?", metavar="PROMPT", help="the task, the same for every repository")
    parser.add_argument("--repos", required=True, metavar="FILE|OWNER/*",
                        help="a file with one repository (OWNER/REPO[@REF]) or folder a line, or OWNER/* for "
                             "every repository of a GitHub user or organisation")
    parser.add_argument("--action", choices=("prompt", "explore", "map"), default="prompt",
                        help="prompt (default): run PROMPT; explore: one exploration step of each repository's "
                             "codebase map; map: refresh each map (on the worker that runs the job)")
    parser.add_argument("--mode", choices=MODES, help="approval mode (default: the workers' config); in ask mode "
                        "a job waits for `fleet approve`")
    parser.add_argument("--model", metavar="MODEL", help="litellm model string (default: the workers' config)")
    parser.add_argument("--profile", metavar="NAME", help="agent profile")
    parser.add_argument("--workflow", choices=WORKFLOWS, help="as for `coder-tui run`")
    parser.add_argument("--max-steps", type=positive, metavar="N", help="most model turns per job")
    parser.add_argument("--max-cost", type=_price, metavar="USD", help="budget of the whole batch: jobs stop "
                        "and the rest do not start once it is spent")
    parser.add_argument("--max-tokens", type=positive, metavar="N", help="token budget of the whole batch")
    parser.add_argument("--concurrency", type=positive, metavar="N", help="most jobs of this batch running at once "
                        "(default: as many as there are free workers)")
    publish = parser.add_mutually_exclusive_group()
    publish.add_argument("--pr", action="store_true", help="open a pull request per repository")
    publish.add_argument("--no-publish", action="store_true", help="keep GitHub edits in each job's session")
    parser.add_argument("--detach", action="store_true", help="queue the batch, print its id and return")
    parser.add_argument("--json", action="store_true", help="JSON lines: each event, then the batch")


def _status(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("status", help="the batches, or one batch's jobs", description=(
        "Without BATCH: the recent batches. With BATCH (an id or its first characters): its settings, "
        "spend and every job's state and outcome (branch, pull request, session, spend)."))
    parser.add_argument("batch", nargs="?", metavar="BATCH")
    parser.add_argument("--follow", action="store_true", help="follow the batch live, as `fleet run` does")
    parser.add_argument("--diff", metavar="JOB", help="print a job's diff (JOB: its number or repository)")
    parser.add_argument("--record", metavar="JOB", help="print a job's session record (JSONL)")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def _approve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("approve", help="answer the approvals jobs wait for", description=(
        "Answer what jobs of a batch in ask mode wait for. Without JOB or --all, show each pending approval "
        "(with its diff). A job whose worker still waits goes on at once; a parked one is queued again and "
        "resumes its session with the answer."))
    parser.add_argument("batch", metavar="BATCH")
    parser.add_argument("job", nargs="?", metavar="JOB", help="the job's number or repository")
    parser.add_argument("--all", action="store_true", help="every job that waits")
    parser.add_argument("--always", action="store_true", help="allow the tool for the rest of the job")
    parser.add_argument("--deny", action="store_true", help="refuse instead")
    parser.add_argument("--feedback", metavar="TEXT", help="with --deny: what the model is told")


def fleet_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coder-tui fleet", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_worker, _run, _status, _approve):
        add(sub)
    return parser


def cmd_fleet(argv: list[str]) -> int:
    options = fleet_parser().parse_args(argv)
    from agent.frontends.fleet import main

    return main(options.command, options)
