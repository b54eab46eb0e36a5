"""The `coder-tui` command line. Parses arguments only; heavy modules load after dispatch.

    coder-tui [DIR] [options]          open the app on a folder
    coder-tui run PROMPT [options]     run the agent headless
    coder-tui undo [CHECKPOINT]        restore a checkpoint
    coder-tui sessions                 list recorded sessions
    coder-tui room ROOM_ID [options]   join a live Open Collaboration Tools room headless
    coder-tui map | explore | tasks    the codebase map, exploration, scheduled tasks
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from agent import __version__
from tui import fleet_cli, knowledge_cli
from tui.cliargs import (MODES, WORKFLOWS, connection_options, max_steps_option, positive, room_id, serve_parser,
                         workspace_option)
from tui.helpformat import WrappedRawHelp

SANDBOXES = ("auto", "bwrap", "off")
COMMANDS_HELP = """commands:
  coder-tui [DIR]              open the app on a folder (default: the current folder)
  coder-tui --github OWNER/REPO[@REF] [--clone] [--issue N]
                               open the app on a GitHub repository (no clone unless --clone)
  coder-tui --room ROOM_ID     open the app in a live OCT room (answers @agent lines beside you)
  coder-tui run PROMPT         run the agent without the UI (see `coder-tui run --help`)
  coder-tui undo [CHECKPOINT]  restore the workspace to a checkpoint (`--list` shows them)
  coder-tui sessions           list recorded sessions (resume one with --resume ID) and the live ones
  coder-tui host               the session host in the foreground (`run --attach ID` starts it on demand)
  coder-tui attach [ID]        the app on a session in the session host (live or recorded; a picker without ID)
  coder-tui room ROOM_ID       join a live OCT room and answer @agent prompts (`coder-tui room --help`)
  coder-tui profiles           list agent profiles (built in, user, workspace); pick one with --profile
  coder-tui skills             list the Agent Skills (SKILL.md) the agent is offered, and broken ones
  coder-tui mcp                start the configured MCP servers and list their state and tools
  coder-tui trust [DIR]        trust a folder's own files (`--list`, `--revoke DIR`; `coder-tui trust --help`)
  coder-tui serve [DIR]        serve the agent over HTTP + SSE for editors (`coder-tui serve --help`)
  coder-tui acp                serve an editor (Zed, Toad, ...) over the Agent Client Protocol on stdio
{knowledge}
modes:
  plan   the agent only reads and proposes
  ask    every edit, command and web request is shown for approval first (default)
  allow  edits, commands and web requests run without asking

model configuration (first found wins):
  --model / --api-base / --api-key flags
  environment: CODER_TUI_MODEL, CODER_TUI_API_BASE, CODER_TUI_API_KEY, and the provider's own
               variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)
  .coder-tui.toml in the workspace, then config.toml in the user config folder
  The model is a litellm model string, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, or
  ollama_chat/qwen2.5-coder with --api-base http://localhost:11434.
"""


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=MODES, help="approval mode (default: ask, or the config's)")
    connection_options(parser)
    parser.add_argument("--resume", metavar="ID|last", help="continue a recorded session")
    parser.add_argument("--workflow", choices=WORKFLOWS,
                        help="direct: one agent loop (default); structured: plan every task, then run its steps; "
                             "auto: plan only new tasks that need several steps (see docs/workflow.md)")


ACP_TRUST_GONE = ("--trust is gone from `coder-tui acp`: it trusted every folder the editor opened, for good. "
                  "Trust a folder yourself with `coder-tui trust DIR` (see `coder-tui trust --help`)")


def _workspace_options(parser: argparse.ArgumentParser, trust: bool = True) -> None:
    parser.add_argument("--trust", action="store_true",
                        help="trust this folder (remembered, as `coder-tui trust DIR` does): without it, the "
                             "folder's own files may not pick a model, endpoint, key, command or approval"
                        if trust else argparse.SUPPRESS)
    parser.add_argument("--sandbox", choices=SANDBOXES,
                        help="run shell commands in bubblewrap: auto (when it works, default), bwrap (required), off")


def _profile_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", metavar="NAME",
                        help="agent profile: coder (default), reviewer, architect, ask, or your own "
                             "(`coder-tui profiles` lists them)")


def _github_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    group = parser.add_argument_group("GitHub")
    group.add_argument("--github", metavar="OWNER/REPO[@REF]",
                       help="work on a GitHub repository through the API, without cloning it "
                            "(also https://github.com/OWNER/REPO[/tree/REF])")
    group.add_argument("--clone", action="store_true",
                       help="with --github: work in a blobless clone (cached, with shell tools); publishing pushes")
    group.add_argument("--issue", type=positive, metavar="N",
                       help="with --github: start from issue N (its title, body and comments become the task)")
    return group


def _room_options(parser: argparse.ArgumentParser, positional: bool) -> None:
    group = parser.add_argument_group("Open Collaboration Tools room")
    if positional:
        group.add_argument("room_id", metavar="ROOM_ID", type=room_id, help="the room id the host shared")
    else:
        group.add_argument("--room", metavar="ROOM_ID", type=room_id,
                           help="join a live OCT room as a guest and answer @NAME prompts in it")
    group.add_argument("--server", default="https://api.open-collab.tools/", metavar="URL",
                       help="OCT server (default: https://api.open-collab.tools/)")
    group.add_argument("--name", default="agent",
                       help="our name in the room, and the @NAME prompts use (default: agent)")
    group.add_argument("--email", help="email shown to the host when asking to join")
    group.add_argument("--approver", action="append", metavar="NAME",
                       help="a room peer (name or email as the room shows it; \"*\" for everyone) who may "
                            "answer the agent's proposals from the chat with @NAME yes / @NAME no FEEDBACK "
                            "(repeatable; adds to [room] approvers in config.toml; default: only you, here)")


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui", description="A terminal coding agent that shows every edit as a diff and asks first.",
        epilog=COMMANDS_HELP.format(knowledge=knowledge_cli.HELP + fleet_cli.HELP), formatter_class=WrappedRawHelp,
    )
    parser.add_argument("workspace", nargs="?", default=".", metavar="DIR", help="folder to work in")
    _model_options(parser)
    _workspace_options(parser)
    _profile_option(parser)
    parser.add_argument("--theme", metavar="NAME", help="colour theme (dark, light, high-contrast, or a user theme)")
    _github_options(parser)
    _room_options(parser, positional=False)
    parser.add_argument("--version", action="version", version=f"coder-tui {__version__}")
    return parser


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui run", description=(
            "Run the agent on PROMPT without the UI. Output streams as readable text, or with --json as "
            "one JSON event per line. In ask mode, answer approvals on stdin: a JSON line "
            '{"type": "decision", "approval_id": ..., "decision": "allow_once"|"allow_all"|"deny"|"stop", '
            '"feedback": "..."} (or y / a / n [feedback] / s). '
            "Exit codes: 0 completed, 1 failed or stopped, 2 usage or configuration error, 3 an "
            "approval was denied because stdin closed before it was answered."),
    )
    parser.add_argument("prompt", metavar="PROMPT", nargs="?", default="",
                        help="what the agent should do (optional with --issue; without it, --resume "
                             "continues the session's unfinished plan at its first unfinished step)")
    parser.add_argument("dir", metavar="DIR", nargs="?",
                        help="folder to work in (default: the current folder, or the resumed session's)")
    parser.add_argument("--workspace", metavar="DIR", help="the same as DIR")
    _model_options(parser)
    _profile_option(parser)
    max_steps_option(parser, "in this run")
    parser.add_argument("--max-cost", type=_usd, metavar="USD", help="stop the run once it has cost this much")
    parser.add_argument("--max-tokens", type=positive, metavar="N", help="stop the run once it has used N tokens")
    parser.add_argument("--until", metavar="CMD", help="a goal: after each round run the check CMD in the folder; "
                        "keep working (its output goes to the model) until it exits 0, or --max-rounds is reached")
    parser.add_argument("--max-rounds", type=positive, default=10, metavar="N",
                        help="with --until: the most rounds (default: 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON event per line, nothing else")
    parser.add_argument("--json-format", choices=("ours", "seed"), metavar="FORMAT",
                        help="with --json (implied): `ours` (default, every event) or `seed`, seed 003's shapes "
                             "(text_chunk, agent_step, approval_required, complete, error)")
    parser.add_argument("--image", dest="images", action="append", metavar="PATH",
                        help="send this image with the prompt (png, jpeg, gif or webp up to 5 MB; repeatable); "
                             "for models that take images")
    parser.add_argument("--fork", metavar="ID|last",
                        help="continue a copy of a recorded session (the original stays as it was)")
    parser.add_argument("--attach", metavar="ID", help="run PROMPT in session ID (a prefix, `last` or `new`) "
                        "through the session host, beside the other front ends attached to it (the host "
                        "starts if it does not run)")
    parser.add_argument("--no-host", action="store_true", help="run in this process even when a session host "
                        "runs, and start none for the next run (config: host = \"off\"; see docs/host.md)")
    parser.add_argument("--verbose", action="store_true",
                        help="say on stderr which path reaches the model (a built-in client or litellm) and where")
    _workspace_options(parser)
    _github_options(parser).add_argument(
        "--no-publish", action="store_true",
        help="with --github: keep the edits unpublished in the session (by default a run that completed "
             "commits them to its work branch and prints where)")
    return parser


def undo_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui undo",
        description="Restore the workspace to a checkpoint (default: the newest one that differs from "
                    "the files now). The state before the restore is saved as a checkpoint too.",
    )
    parser.add_argument("checkpoint", nargs="?", metavar="CHECKPOINT", help="checkpoint id (or a unique prefix)")
    parser.add_argument("--list", action="store_true", help="list checkpoints, newest first")
    parser.add_argument("--include-untracked", action="store_true",
                        help="also restore the files the agent never touched since the checkpoint (files you "
                             "made are deleted, your edits undone); without it they are listed and kept, "
                             "or asked about on a terminal")
    workspace_option(parser)
    return parser


def sessions_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coder-tui sessions", description="List recorded sessions, newest first.")
    parser.add_argument("--limit", type=positive, default=30, metavar="N", help="show at most N (default: 30)")
    parser.add_argument("--live", action="store_true", help="the session host's live sessions and their "
                        "subagents: working, waiting for you (on what), done or failed, with their spend")
    return parser


def room_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui room", description=(
            "Join a live Open Collaboration Tools room as a guest and answer prompts: a line with "
            "@NAME followed by Enter in a shared document, or a chat message mentioning @NAME. Runs "
            "without the UI until the room closes or Ctrl+C, then leaves cleanly. In ask mode each "
            "approval is posted to the room chat as a proposal; allowed peers (--approver, [room] "
            "approvers) answer with @NAME yes [N] / @NAME no [N] FEEDBACK, you on stdin, first answer "
            "wins. Exit codes: 0 the room closed or we left, 1 joining failed or the connection was "
            "lost, 2 usage or configuration error."),
    )
    _room_options(parser, positional=True)
    _model_options(parser)
    max_steps_option(parser, "per prompt")
    parser.add_argument("--json", action="store_true", help="print one JSON event per line, nothing else")
    return parser


def acp_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui acp", description=(
            "Serve an editor over the Agent Client Protocol (ACP) on stdin/stdout: the editor starts "
            "this command and drives the agent (Zed: `agent_servers` in settings.json; see docs/acp.md). "
            "Each session works in the folder the editor gives (its `cwd`); its files are read and "
            "written through the editor when it offers that, so unsaved changes are seen. Ask-mode "
            "approvals appear in the editor. Sessions are recorded as usual and can be loaded again. "
            "stdout carries only the protocol; messages go to stderr."),
    )
    parser.add_argument("--mode", choices=MODES, help="approval mode of new sessions (default: ask, or the "
                                                      "config's); the editor can switch it per session")
    connection_options(parser)
    parser.add_argument("--workflow", choices=WORKFLOWS, help="direct (default), structured or auto (see docs/workflow.md)")
    _profile_option(parser)
    max_steps_option(parser, "per prompt")
    _workspace_options(parser, trust=False)
    return parser


def trust_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui trust", formatter_class=WrappedRawHelp, description=(
            "Trust a folder, list the folders you answered for, or forget an answer.\n\n"
            "A folder's own files (.coder-tui.toml, .coder-tui/profiles/, the prompt files they name) come\n"
            "with the repository. Until you trust the folder they give the model text (prompts,\n"
            "descriptions) and harmless limits, never a model, an endpoint, a key, an MCP server, a command,\n"
            "the sandbox or an approval; what they asked for is named each time. Trust is remembered in\n"
            "your config.toml with the folder's identity (device, inode and its generation): a different\n"
            "folder later put at the same path (a fresh clone of another repository) is not trusted."),
        epilog="examples:\n  coder-tui trust              trust the current folder\n"
               "  coder-tui trust ~/src/app     trust ~/src/app\n  coder-tui trust --list\n"
               "  coder-tui trust --revoke ~/src/app\n\n"
               "Editors (`coder-tui acp`) use the same answers: trust a folder here before opening it there.")
    parser.add_argument("folder", nargs="?", default=".", metavar="DIR", help="the folder (default: .)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--list", action="store_true", help="list the folders you answered for and the answer")
    action.add_argument("--revoke", action="store_true", help="forget the answer for DIR (it is asked again)")
    return parser


def listing_parser(name: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"coder-tui {name}", description=description)
    workspace_option(parser, "folder whose config to use (default: .)")
    return parser


def _usd(text: str) -> float:
    try:
        value = float(text.removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def _cmd_run(argv: list[str]) -> int:
    parser = run_parser()
    options = parser.parse_args(argv)
    if options.dir is not None:  # DIR as every other command takes it; --workspace is the older spelling
        if options.workspace is not None and options.workspace != options.dir:
            parser.error(f"DIR {options.dir!r} and --workspace {options.workspace!r} name different folders")
        options.workspace = options.dir
    if options.until and options.attach:
        parser.error("--until runs its checks in this process: it cannot be combined with --attach")
    if options.attach:
        if options.resume or options.github:
            parser.error("--attach cannot be combined with --resume or --github")
        from agent.frontends.rundriver import IN_PROCESS, main as attach_main

        code = attach_main(options)
        if code != IN_PROCESS:
            return code
        options.resume = None if options.attach == "new" else options.attach  # as `run --resume ID`
        return _run_in_process(options)
    if options.until:  # a goal's rounds and checks run here, in the folder's process
        return _run_in_process(options)
    from agent.frontends import hostrun

    if hostrun.setting(options) == "off":
        os.environ[hostrun.ENV_SETTING] = "off"
        return _run_in_process(options)
    if hostrun.stays_in_process(options):
        return _run_in_process(options)
    warm = hostrun.try_host(options)  # a warm host runs it: no agent core, no litellm in this process
    if warm is not None:
        return warm
    code = _run_in_process(options)
    hostrun.start_for_next()  # none ran (or it could not take this run): warm for the next one
    return code


def _run_in_process(options: argparse.Namespace) -> int:
    _start_loading_models(options)
    from agent.llm.preload import pause_startup

    pause_startup()  # until the first model request (agent/llm/preload.py)
    from agent.frontends.headless import main as headless_main

    return headless_main(options)


def _start_loading_models(options: argparse.Namespace) -> None:
    """A model on the litellm path (agent/llm/routing.py) needs litellm, seconds to import: from
    here on it loads in a thread while `run` imports the agent core, reads the config and opens
    the workspace. A model the built-in clients serve loads nothing. (A model named only in a
    config file is found when the config is read: agent/frontends/headless.py waits for it then.)"""
    from agent.llm.preload import warm_for

    model = getattr(options, "model", None) or os.environ.get("CODER_TUI_MODEL")
    warm_for(model, getattr(options, "api_base", None) or os.environ.get("CODER_TUI_API_BASE"))


def _cmd_undo(argv: list[str]) -> int:
    options = undo_parser().parse_args(argv)
    from agent.frontends.commands import undo

    return undo(options)


def _cmd_sessions(argv: list[str]) -> int:
    options = sessions_parser().parse_args(argv)
    from agent.frontends.commands import list_sessions

    return list_sessions(options)


def _cmd_room(argv: list[str]) -> int:
    options = room_parser().parse_args(argv)
    from agent.frontends.room import main as room_main

    return room_main(options)


def _cmd_acp(argv: list[str]) -> int:
    options = acp_parser().parse_args(argv)
    if options.trust:
        print(f"coder-tui acp: error: {ACP_TRUST_GONE}", file=sys.stderr)
        return 2
    from agent.frontends.acp_initialize import answer_initialize

    early = answer_initialize(options)  # before the SDK's import: the editor is ready at once
    from agent.frontends.acp import main as acp_main

    return acp_main(options, early)


def _cmd_profiles(argv: list[str]) -> int:
    options = listing_parser("profiles", "List the agent profiles (* marks the configured one).").parse_args(argv)
    from agent.frontends.profiles import list_profiles

    return list_profiles(options)


def _cmd_skills(argv: list[str]) -> int:
    options = listing_parser("skills", "List the Agent Skills this folder's sessions offer (name, description, "
                                       "where from) and the ones left out with their problems.").parse_args(argv)
    from agent.frontends.custom import list_skills

    return list_skills(options)


def _cmd_mcp(argv: list[str]) -> int:
    options = listing_parser("mcp", "Start the configured MCP servers, list their state and tools, and "
                                    "stop them. Exit code 1 when a server does not start.").parse_args(argv)
    from agent.frontends.profiles import list_mcp

    return list_mcp(options)


def _cmd_trust(argv: list[str]) -> int:
    options = trust_parser().parse_args(argv)
    from agent.frontends.commands import trust

    return trust(options)


def _cmd_serve(argv: list[str]) -> int:
    options = serve_parser().parse_args(argv)
    from agent.frontends.serve.start import main as serve_main  # listens before the heavy imports

    return serve_main(options)


def host_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-tui host", description="Run the session host in the foreground: it owns live sessions that "
        "`run --attach` and `coder-tui sessions` reach over a Unix socket in your runtime folder. Front ends "
        "start it on demand; it exits after --idle seconds with no live session and no client.")
    parser.add_argument("--idle", type=float, default=600.0, metavar="SECONDS",
                        help="quiet period before the host exits (default: 600)")
    parser.add_argument("--socket", metavar="PATH", help=argparse.SUPPRESS)
    return parser


def _cmd_host(argv: list[str]) -> int:
    options = host_parser().parse_args(argv)
    from agent.frontends.host import main as host_main

    return host_main(options)


def _cmd_attach(argv: list[str]) -> int:
    from tui.attach_cli import cmd_attach

    return cmd_attach(argv)


def _cmd_launch(argv: list[str]) -> int:
    parser = launch_parser()
    options = parser.parse_args(argv)
    problem = _launch_problem(options)
    if problem:
        parser.error(problem)
    if options.resume:  # an unknown session is said at once, as `run --resume` says it, not on a screen
        from agent.session.known import missing_session

        if (missing := missing_session(options.resume)) is not None:
            return usage_error(f"--resume: {missing}")
    import gc

    # Importing the UI toolkit creates a few hundred thousand long-lived objects; a full collection
    # over them mid-startup costs the first frame ~20 ms. The app freezes them after that frame.
    gc.disable()
    from tui.app import run_app

    return run_app(options)


def usage_error(message: str) -> int:
    """A usage error found before the app opens: one line, exit code 2 (as `run` says its own)."""
    from agent.textsafe import visible

    print(f"coder-tui: error: {visible(message)}", file=sys.stderr)
    return 2


def _launch_problem(options: argparse.Namespace) -> str | None:
    """What is wrong with the app's arguments, before any screen opens."""
    import os

    if options.room and options.github:
        return "--room and --github cannot be combined: a room's files are the room's documents"
    if (options.clone or options.issue) and not options.github:
        return "--clone and --issue need --github OWNER/REPO"
    if options.approver and not options.room:
        return "--approver needs --room ROOM_ID: it names the room peers who may answer proposals"
    if options.workspace != "." and (options.room or options.github):
        return "DIR cannot be combined with --room or --github"
    if not os.path.isdir(options.workspace):
        return f"DIR: {options.workspace!r} is not a folder"
    if options.github:  # as `run` does: a repository that cannot exist is a usage error, not a screen
        from agent.github.errors import InvalidRepoSpec
        from agent.github.spec import parse_repo_spec

        try:
            parse_repo_spec(options.github)
        except InvalidRepoSpec as exc:
            return f"--github: {exc}"
    return None


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "attach": _cmd_attach,
    "run": _cmd_run, "undo": _cmd_undo, "sessions": _cmd_sessions, "room": _cmd_room,
    "host": _cmd_host, "profiles": _cmd_profiles, "skills": _cmd_skills, "mcp": _cmd_mcp, "serve": _cmd_serve,
    "acp": _cmd_acp, "trust": _cmd_trust,
    "map": knowledge_cli.cmd_map, "explore": knowledge_cli.cmd_explore, "tasks": knowledge_cli.cmd_tasks,
    "fleet": fleet_cli.cmd_fleet,
}


def main(argv: list[str] | None = None) -> int:
    from agent.pydantic_plugins import skip

    skip()  # no search for pydantic plugins: tens of ms of every launch
    _quick_exit()
    args = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS.get(args[0]) if args else None
    try:
        try:
            return command(args[1:]) if command else _cmd_launch(args)
        finally:  # here, not at exit (after --help too): a reader that left is caught below
            sys.stdout.flush()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """stdout's reader left (`coder-tui sessions | head`): end quietly, as a program killed by
    SIGPIPE does (exit 141), for every command. What is still buffered goes nowhere, so that the
    flush at exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _quick_exit() -> None:
    """At exit, after every other exit handler (the first registered runs last), the objects left
    are frozen out of the interpreter's final garbage collection: walking the hundreds of thousands
    an agent run leaves took 50-200 ms after the answer was printed. What they hold is released as
    the modules are torn down, as before; only cycles are left to the operating system."""
    import atexit
    import gc

    atexit.register(gc.freeze)


if __name__ == "__main__":
    sys.exit(main())
