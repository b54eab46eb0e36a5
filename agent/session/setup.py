"""The agent factory (seed 003): a session's profile made into a run with its tools, limits and models.

`AgentSetup` belongs to an `AgentSession`, which gives it its inputs (config, workspace, tool
registry, approval gate, conversation, totals, model, event sink, record) and uses what it builds.
It picks the profile (`--profile`, config `profile`, or `coder`), offers exactly the tools the
profile and the mode allow (MCP tools included), chooses the agent type (ReAct for models litellm
knows cannot call tools; Ollama's /api/chat takes tools), and gives each run its budget, compaction
and the fallback models. The profile's mode is set on the gate it was given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.agents import RUNS, IterativeRun
from agent.approval import ApprovalGate
from agent.config import Config
from agent.compaction import Carried, Compactor, summary_request
from agent.events import Compacted, WarningEvent
from agent.llm import LLM
from agent.loop import Totals
from agent.mcp import McpManager
from agent.modelchain import Budget, ModelChain
from agent.profiles import Profile, ProfileSet
from agent.profiles import toolset
from agent.tools.base import Tool
from agent.tools.gitread import GitReadOnly
from agent.tools.registry import ToolRegistry
from agent.tools.toolsearch import ToolSearch, ToolShelf
from agent.workspaces.base import Workspace
from agent.workspace_input.load import workspace_input

EXTRA_TOOLS = (GitReadOnly,)  # offered only to profiles that name them


class AgentSetup:
    def __init__(self, config: Config, workspace: Workspace, registry: ToolRegistry, gate: ApprovalGate,
                 messages: list[dict[str, Any]], totals: Totals, llm: Callable[[], LLM],
                 emit: Callable[[Any], None], record_compaction: Callable[..., None]) -> None:
        self.config, self.workspace, self.registry, self.gate = config, workspace, registry, gate
        self.messages, self.totals, self.llm, self.emit = messages, totals, llm, emit
        self.record_compaction = record_compaction
        self.input = workspace_input(workspace.root, config)  # profiles, MCP servers, what was left out
        self.profiles: ProfileSet = self.input.profiles
        self.profile: Profile = self.profiles.get(config.profile)
        for cls in EXTRA_TOOLS:
            if registry.get(cls.name) is None:
                registry.register(cls())
        self.extras = {cls.name for cls in EXTRA_TOOLS}
        search = registry.get(ToolSearch.name)
        if not isinstance(search, ToolSearch):  # MCP tools beyond the provider's limit (agent/tools/toolsearch.py)
            search = ToolSearch(ToolShelf())
            registry.register(search)
        self.search, self.shelf = search, search.shelf
        self._limit_said: tuple[str, int] | None = None
        self.mcp = McpManager(self.input.mcp_servers, emit)
        self._registered: set[str] = set()
        self._chain: ModelChain | None = None
        self._chain_base: LLM | None = None
        self._compactor: Compactor | None = None
        self._unpriced_said = False  # the cost limit's warning for an unpriced model, said once
        self._schemas = toolset.SchemaCache()
        self.turn: Any = None  # a custom command's Expansion while its turn runs (agent/custom/turn.py)
        self.carry: Callable[[], Carried] = Carried  # what compaction keeps word for word (the session's task state)
        # a subagent's: the tools it may have at most (its parent's), and the parent budget it spends from
        self.scope: Callable[[Tool], bool] | None = None
        self.spends_for: Callable[[], tuple[Budget, Totals] | None] | None = None
        if self.input.skills.skills and registry.get("load_skill") is None:
            from agent.custom.skilltool import LoadSkill

            registry.register(LoadSkill(self.input.skills))
        if self.profile.mode and config.sources.get("mode") not in ("command line", "environment"):
            gate.mode = self.profile.mode
        self.report_ignored()

    # -- profile --------------------------------------------------------------------------
    def use_profile(self, name: str) -> Profile:
        """Switch profiles from the next run on (ProfileError for an unknown name)."""
        self.profile = self.profiles.get(name)
        if self.profile.mode:
            self.gate.mode = self.profile.mode
        self._chain = None
        return self.profile

    def prompt_section(self, markers: dict[str, str] | None = None) -> str:
        """The profile's prompt, its built-in markers (seed 003: `{mode}`, `{facts}`, `{tools}`)
        replaced; any other braces are left as written."""
        text = self.profile.prompt_text()
        for name, value in (markers or {}).items():
            text = text.replace("{" + name + "}", value)
        section = f"\n## Profile: {self.profile.name}\n{text}\n" if text else ""
        return section + self.input.skills.prompt_section()

    def expand(self, prompt: str) -> Any:
        """A custom command's Expansion for `/name args` (None: not one); its turn uses its model and tools."""
        self.turn = self.input.commands.expand(prompt)
        return self.turn

    # -- tools ----------------------------------------------------------------------------
    def _sync_mcp(self) -> None:
        for tool in self.mcp.tools():
            if tool.name not in self._registered and self.registry.get(tool.name) is None:
                self.registry.register(tool)
                self._registered.add(tool.name)

    def offered(self) -> list[Tool]:
        self._sync_mcp()
        tools = toolset.offered(self.registry, self.workspace, self.profile, self.gate.mode, self.extras)
        if self.scope is not None:
            tools = [t for t in tools if self.scope(t)]
        if self.turn is not None and self.turn.tools:
            from agent.custom.turn import selectors

            chosen = selectors(self.turn.tools)
            tools = [t for t in tools if toolset.selected(t, chosen, False)]
        return self._within_limit(tools)

    def _within_limit(self, tools: list[Tool]) -> list[Tool]:
        """At most as many tools as the model's provider takes: the rest through tool_search."""
        from agent.llm.routing import route

        tools = [t for t in tools if t is not self.search]
        model = self.config.model or ""
        limit = route(model, self.config.api_base, self.config.model_path).max_tools if model else None
        if limit is None:
            self.shelf.active = False
            return tools
        fitted = self.shelf.fit(tools, limit, self.search)
        if self.shelf.active and self._limit_said != (model, limit):
            self._limit_said = (model, limit)
            self.emit(WarningEvent(message=f"{len(tools)} tools are more than {model} takes at once ({limit}): "
                                           f"{len(self.shelf.waiting)} MCP tools are offered through tool_search, "
                                           "which finds them by name or description (docs/tools.md: Many tools)"))
        return fitted

    def schemas(self) -> list[dict[str, Any]]:
        return self._schemas(self.offered())

    def permits(self, tool: Tool) -> bool:
        if self.scope is not None and not self.scope(tool):
            return False
        return tool is self.search or toolset.profile_allows(tool, self.profile, self.extras)

    # -- models ---------------------------------------------------------------------------
    def model_chain(self, base: LLM) -> ModelChain:
        """The session's model (or the profile's) and its fallbacks; a fallback stays for the session."""
        if self._chain is None or self._chain_base is not base:
            self._chain_base = base
            first = _with_model(base, self.profile.model) if self.profile.model else base
            self._chain = ModelChain(first, list(self.config.fallback_models), self.emit)
        return self._chain

    def small_llm(self) -> LLM:
        name = self.profile.small_model or self.config.small_model
        base = self.llm()
        return _with_model(base, name) if name else base

    async def _complete_plain(self, messages: list[dict[str, Any]]) -> str:
        reply = await self.small_llm().complete(messages, [], lambda text: None, lambda *a: None)
        self.emit(self.totals.add(reply))
        return reply.text

    async def summarize(self, messages: list[dict[str, Any]], kept: list[str] | None = None) -> str:
        return await self._complete_plain(summary_request(messages, kept))

    async def extract(self, prompt: str, page: str) -> str:
        """web_fetch's prompt: what the page says about it, written by the small model."""
        from agent.tools.web import extraction_request

        return await self._complete_plain(extraction_request(prompt, page))

    async def context_window(self, model: str) -> int | None:
        if self.config.context_window:
            return self.config.context_window
        from agent.llm.facts import facts

        return facts(model).window  # None for a model the table does not know: no automatic compaction

    async def agent_type(self, model: str) -> str:
        if self.profile.agent != "iterative":
            return self.profile.agent
        calling = self.config.tool_calling
        if calling == "text":
            return "react"
        if calling == "native":
            return "iterative"
        from agent.llm.facts import facts

        # only a model the table positively lists without tool calling gets the text protocol
        return "react" if facts(model).without_tools else "iterative"

    # -- runs -----------------------------------------------------------------------------
    def compactor(self, window: int | None) -> Compactor:
        """The session's compactor (it keeps what it learned about the provider's token counts)."""
        if self._compactor is None or self._compactor.window != window:
            self._compactor = Compactor(window, self.summarize, self.emit, self.record_compaction, self.carry)
        return self._compactor

    def budget(self) -> Budget | None:
        """A turn's token and cost budget, counted from the session's totals now (None: no limit)."""
        config, profile = self.config, self.profile
        own = Budget.starting_at(self.totals, config.max_tokens or profile.max_tokens,
                                 config.max_cost or profile.max_cost)
        parent = self.spends_for() if self.spends_for is not None else None
        if parent is None:
            return own
        budget = own or Budget(start_tokens=self.totals.prompt_tokens + self.totals.completion_tokens, start_cost=self.totals.cost or 0.0)
        budget.parent = parent
        return budget

    async def build_run(self, llm: LLM, budget: Budget | None, **run_args: Any) -> IterativeRun:
        """A run with the profile's tools, agent type, step limit, models and compaction, spending
        from `budget` (a turn's runs share one: see AgentSession.new_run)."""
        chain = self.model_chain(llm)
        if self.turn is not None and self.turn.model:  # a custom command's model, for its turn
            chain = ModelChain(_with_model(llm, self.turn.model), list(self.config.fallback_models), self.emit)
        await self.mcp.ensure_started()
        kind = await self.agent_type(chain.model)
        self._warn_unpriced(budget, chain.model)
        config, profile = self.config, self.profile
        max_steps = profile.max_steps if profile.max_steps and "max_steps" not in config.sources else config.max_steps
        if kind == "stream" and profile.save_code_blocks:
            run_args["save_blocks"] = True
        return RUNS[kind](llm=chain, tools=self.schemas(), max_steps=max_steps, budget=budget,  # type: ignore[arg-type]
                          compactor=self.compactor(await self.context_window(chain.model)),
                          tools_now=self.schemas, **run_args)

    def _warn_unpriced(self, budget: Budget | None, model: str) -> None:
        """Say once that a cost limit cannot hold for a model litellm has no prices for (a proxy alias)."""
        from agent.llm import model_prices

        if budget is None or budget.max_cost is None or self._unpriced_said or model_prices(model) is not None:
            return
        self._unpriced_said = True
        self.emit(WarningEvent(message=f"--max-cost is not applied: litellm has no prices for {model}, so "
                                       "its cost is unknown; --max-tokens still limits a run"))

    async def compact_now(self) -> Compacted | None:
        window = await self.context_window(self.llm().model)
        return await self.compactor(window).compact(self.messages, self.schemas(), manual=True)

    def report_ignored(self) -> None:
        """What the workspace supplied and the session does not use, said once as warnings."""
        for line in self.input.notices():
            self.emit(WarningEvent(message=line))


def _with_model(base: LLM, model: str) -> LLM:
    from dataclasses import replace

    return replace(base, model=model)
