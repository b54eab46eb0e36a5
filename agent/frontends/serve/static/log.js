// coder-tui serve's browser view (agent/frontends/serve/view.py), its first script: the shared state,
// and the log of the followed session (its events shown, its approvals answered). No build step.
// Everything that comes from a session is put on the page with textContent, never as markup.
"use strict";

const KEY = "coder-tui-token";
const $ = (id) => document.getElementById(id);
const state = { token: "", current: null, follow: null, texts: null, approvals: new Map(), sessions: [],
                running: false, closed: false, poll: null, stick: true, replayed: false, listed: "" };

// ---- text from outside: shown, never interpreted -------------------------------------------------
// control and bidi characters (which could disguise what is shown) appear as \u escapes
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g;
function safe(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return (text || "").replace(/\r\n/g, "\n").replace(HIDDEN, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = safe(text);
  return node;
}

// ---- the log ------------------------------------------------------------------------------------
// The log follows the newest entry unless the reader scrolled up to read something older.
function add(node) {
  $("log").append(node);
  toEnd();
  return node;
}
function keepAtEnd(action) {
  action();
  toEnd();
}
function toEnd() {
  const log = $("log");
  if (state.stick) log.scrollTop = log.scrollHeight;
}
function setBadge(cls, text) {
  const badge = $("state");
  badge.className = "badge " + cls;
  badge.textContent = text;
}
function showStatus() {
  if (state.closed) return setBadge("closed", "session closed");
  const waiting = [...state.approvals.values()].some((card) => !card.classList.contains("resolved"));
  if (waiting) return setBadge("waiting", "waits for your approval");
  setBadge(state.running ? "running" : "", state.running ? "running" : "idle");
}
function entry(cls, who, text) {
  const node = el("div", "entry " + cls);
  if (who) node.append(el("div", "who", who));
  if (text !== undefined) node.append(document.createTextNode(safe(text)));
  state.texts = null;
  return add(node);
}
function diffBlock(text) {
  const pre = el("pre", "diff");
  for (const line of String(text || "").replace(/\n$/, "").split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---")) continue;
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
    pre.append(el("span", cls, line || " "));
  }
  return pre;
}
function fileBlock(path, diff, label) {
  const box = el("div", "file");
  box.append(el("div", "file-name", label ? path + "  (" + label + ")" : path));
  box.append(diffBlock(diff));
  return box;
}
function brief(args) {
  if (!args || typeof args !== "object") return "";
  const main = args.file_path || args.path || args.command || args.url || args.query || args.pattern;
  return main !== undefined ? String(main) : JSON.stringify(args);
}

const HANDLERS = {
  run_started(e) { state.running = true; entry("user", "prompt", e.prompt || ""); },
  turn_started(e) { state.running = true; },
  prompt_queued(e) { entry("note", "", "prompt queued by " + (e.by || "a client") + ": " + (e.prompt || "")); },
  text_delta(e) {
    keepAtEnd(() => {
      if (!state.texts) { state.texts = entry("text", "agent"); }
      // a chunk may end between the \r and the \n of a line end
      state.texts.append(document.createTextNode(safe(String(e.text).replace(/\r$/, ""))));
    });
  },
  reasoning_delta() {},
  tool_call(e) {
    const node = entry("tool", "");
    node.dataset.call = e.call_id;
    node.append(el("span", "name", e.tool), el("span", "args mono", brief(e.args)));
  },
  tool_result(e) {
    const node = [...document.querySelectorAll(".entry.tool")].find((n) => n.dataset.call === e.call_id);
    const mark = el("span", "result " + (e.ok ? "ok" : "failed"), e.ok ? "✓" : "✗ " + (e.error || "failed"));
    if (node) node.append(mark); else entry("tool", "").append(el("span", "name", e.tool), mark);
  },
  file_changed(e) { entry("diff", "changed").append(fileBlock(e.path, e.diff, e.reason)); },
  approval_required(e) { approvalCard(e); },
  approval_resolved(e) { resolveCard(e.approval_id, e.decision, e.feedback); },
  approval_answered(e) { answeredBy(e.approval_id, e.by); },
  plan_updated(e) { showPlan((e.todos || []).map((t) => [t.content, t.status])); },
  plan_created(e) { showPlan(((e.plan || {}).steps || []).map((s) => [s.title, s.status])); },
  plan_decision_required(e) { entry("note", "", "the plan waits for a decision (answer it in the editor or the app)"); },
  warning(e) { entry("warning", "warning", e.message); },
  error(e) { entry("error", "error", e.message); },
  retrying(e) { entry("note", "", "retrying: " + e.why); },
  complete(e) {
    state.running = false;
    const node = entry("complete" + (e.success ? "" : " failed"), "", (e.success ? "done" : "stopped") +
      " (" + String(e.completion_reason).replace(/_/g, " ") + ")");
    node.title = "iterations: " + e.iterations;
    renderSessions();
  },
  replay_end(e) { state.running = !!e.running; state.replayed = true; renderSessions(); },
  session_closed() { state.closed = true; entry("note", "", "the session was closed"); },
};
function handle(event) {
  const handler = HANDLERS[event.type];
  if (handler) handler(event);
  showStatus();
}
function showPlan(items) {
  const list = $("plan-items");
  list.replaceChildren(...items.map(([text, status]) => el("li", status || "", text)));
  $("plan").hidden = items.length === 0;
}

// ---- approvals ----------------------------------------------------------------------------------
function approvalCard(e) {
  const card = el("div", "entry approval");
  card.dataset.id = e.approval_id;
  card.append(el("h3", "", "Approval needed: " + (e.kind || e.tool)));
  if (e.summary) card.append(el("p", "summary", e.summary));
  const why = (e.args || {}).reason;  // the model's reason for the call, as the app's "why:" line
  if (why) card.append(el("p", "why", "why: " + why));
  if (e.command) card.append(el("pre", "command", "$ " + e.command + (e.cwd ? "   (in " + e.cwd + ")" : "")));
  if (e.url) card.append(el("pre", "command", e.url));
  for (const file of e.files || []) {
    card.append(fileBlock(file.path, file.diff, file.created ? "new file" : file.deleted ? "deleted" : ""));
  }
  const actions = el("div", "actions");
  const feedback = el("input");
  feedback.placeholder = "Feedback for the agent (optional)";
  feedback.setAttribute("aria-label", "feedback");
  const allow = el("button", "primary", "Allow");
  const deny = el("button", "danger", "Deny");
  for (const [button, decision] of [[allow, "allow_once"], [deny, "deny"]]) {
    button.type = "button";
    button.addEventListener("click", () => answer(card, decision, feedback.value.trim()));
  }
  actions.append(allow, deny, feedback);
  card.append(actions, el("div", "outcome"));
  state.approvals.set(e.approval_id, card);
  add(card);
  state.texts = null;
  renderSessions();
}
async function answer(card, decision, feedback) {
  const buttons = card.querySelectorAll("button, input");
  buttons.forEach((b) => { b.disabled = true; });
  const outcome = card.querySelector(".outcome");
  outcome.textContent = "sending…";
  state.stick = true;  // answered: what the agent does next comes into sight
  const body = { decision };
  if (feedback) body.feedback = feedback;
  let response;
  try {
    response = await api("/api/approvals/" + encodeURIComponent(card.dataset.id), {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (error) {
    outcome.textContent = error instanceof Refused ? "" : "cannot reach the server: try again";
    buttons.forEach((b) => { b.disabled = false; });
    return;
  }
  if (response.ok) {
    if (!card.classList.contains("resolved")) outcome.textContent = "answered; waiting for the agent…";
    card.dataset.mine = "1";
    return;
  }
  const message = await errorOf(response);
  if (card.classList.contains("resolved")) return;
  // 404: answered elsewhere meanwhile (its resolution follows), or not this server's to answer
  outcome.textContent = safe(response.status === 404 ? "not answered from here: " + message : message);
  if (response.status !== 404) buttons.forEach((b) => { b.disabled = false; });
}
function resolveCard(id, decision, feedback) {
  const card = state.approvals.get(id);
  if (!card) return;
  const allowed = String(decision).startsWith("allow");
  card.classList.add("resolved", allowed ? "allowed" : "denied");
  card.querySelector("h3").textContent = safe(card.querySelector("h3").textContent.replace(/^Approval needed/, "Approval"));
  card.querySelector(".actions").remove();
  const words = { allow_once: "Allowed", allow_all: "Allowed (from now on)", deny: "Denied", stop: "Stopped" };
  const outcome = card.querySelector(".outcome");
  renderSessions();
  outcome.textContent = safe((words[decision] || String(decision)) + (card.dataset.mine ? " (from this page)" : "") +
    (feedback ? ": " + feedback : ""));
}
function answeredBy(id, by) {
  const card = state.approvals.get(id);
  if (card && by) card.querySelector(".outcome").append(document.createTextNode(safe(" by " + by)));
}
