// coder-tui serve's browser view (agent/frontends/serve/view.py). Plain script, no build step.
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

// ---- the token: from #token=, or asked for; sent as the bearer header ----------------------------
function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}
function start() {
  bind();
  fromAddress();
  window.addEventListener("hashchange", () => { if (hashParams().get("token")) fromAddress(); });
}
function fromAddress() {
  const params = hashParams();
  if (params.get("token")) {
    sessionStorage.setItem(KEY, params.get("token"));
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? "#" + params : ""));
  }
  state.token = sessionStorage.getItem(KEY) || "";
  state.current = null;
  if (state.token) connect(); else showLogin("");
}
function showLogin(message) {
  stopFollowing();
  clearInterval(state.poll);
  $("main").hidden = true;
  $("forget").hidden = true;
  $("menu").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message;
  $("title").textContent = "";
  setBadge("", "");
  $("token").focus();
}
async function connect() {
  try {
    await loadSessions();
  } catch (error) {
    if (!(error instanceof Refused)) showLogin("Cannot list the sessions: " + safe(error.message));
    return;  // refused: the login form says why
  }
  $("login").hidden = true;
  $("main").hidden = false;
  $("forget").hidden = false;
  $("menu").hidden = false;
  clearInterval(state.poll);
  state.poll = setInterval(() => loadSessions().catch(() => {}), 4000);
  const wanted = hashParams().get("session");
  if (wanted && !state.current) follow(wanted);
  else if (!state.current) openMenu();
}
class Refused extends Error {}
async function api(path, init = {}) {
  const headers = Object.assign({}, init.headers || {}, { Authorization: "Bearer " + state.token });
  const response = await fetch(path, Object.assign({}, init, { headers, cache: "no-store" }));
  if (response.status === 401) {
    sessionStorage.removeItem(KEY);
    state.token = "";
    showLogin("That token was refused: use the one `coder-tui serve` printed.");
    throw new Refused("401");
  }
  return response;
}
async function errorOf(response) {
  try {
    return (await response.json()).error || response.statusText;
  } catch (error) {
    return response.status + " " + response.statusText;
  }
}

// ---- the sessions -------------------------------------------------------------------------------
async function loadSessions() {
  const response = await api("/api/sessions");
  if (!response.ok) throw new Error(await errorOf(response));
  const sessions = (await response.json()).sessions || [];
  sessions.sort((a, b) => (b.running - a.running) || (b.created - a.created));
  state.sessions = sessions;
  renderSessions();
}
function renderSessions() {
  const shown = state.sessions.map((listed) => listed.session_id === state.current && state.replayed ?
    Object.assign({}, listed, { running: state.running, pending_approvals: [...state.approvals.values()].filter(
      (card) => !card.classList.contains("resolved")) }) : listed);
  const key = JSON.stringify([state.current, shown.map((s) => [s.session_id, s.prompt, s.running,
                                                                (s.pending_approvals || []).length])]);
  if (key === state.listed) return;  // unchanged: a row is not replaced under a finger about to tap it
  state.listed = key;
  const list = $("sessions");
  list.replaceChildren();
  $("no-sessions").hidden = state.sessions.length > 0;
  for (const session of shown) {
    const button = el("button", session.session_id === state.current ? "current" : "");
    button.type = "button";
    button.append(el("span", "prompt-line", session.prompt || "(no prompt yet)"));
    const meta = el("span", "meta");
    meta.append(el("span", session.running ? "live" : "", session.running ? "● running" : "idle"));
    const waiting = (session.pending_approvals || []).length;
    if (waiting) meta.append(el("span", "waits", waiting + " approval" + (waiting > 1 ? "s" : "") + " waiting"));
    meta.append(el("span", "mono", session.session_id));
    button.append(meta);
    button.addEventListener("click", () => { follow(session.session_id); closeMenu(); });
    const item = el("li");
    item.append(button);
    list.append(item);
  }
}

// ---- following one session over its SSE events stream --------------------------------------------
function stopFollowing() {
  if (state.follow) state.follow.abort();
  state.follow = null;
}
function resetLog() {
  $("log").replaceChildren();
  state.texts = null;
  state.approvals = new Map();
  state.running = false;
  state.closed = false;
  state.stick = true;
  state.replayed = false;
  $("plan").hidden = true;
  $("plan-items").replaceChildren();
}
async function follow(id) {
  stopFollowing();
  state.current = id;
  history.replaceState(null, "", location.pathname + "#session=" + encodeURIComponent(id));
  resetLog();
  $("title").textContent = safe(id);
  $("prompt-note").textContent = "";
  renderSessions();
  const controller = new AbortController();
  state.follow = controller;
  let response;
  try {
    response = await api("/api/sessions/" + encodeURIComponent(id) + "/events", { signal: controller.signal });
  } catch (error) {
    if (!(error instanceof Refused) && !controller.signal.aborted) retry(id, controller, "cannot reach the server");
    return;
  }
  if (!response.ok) {
    add(el("div", "entry error", await errorOf(response)));
    setBadge("closed", "not live");
    return;
  }
  try {
    await readEvents(response, handle);
  } catch (error) {
    if (controller.signal.aborted) return;
  }
  if (!controller.signal.aborted && !state.closed) retry(id, controller, "the stream broke");
}
function retry(id, controller, why) {
  setBadge("closed", why + "; reconnecting");
  setTimeout(() => { if (state.follow === controller) follow(id); }, 2000);
}
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, "")).join("\n");
      if (data) onEvent(JSON.parse(data));
    }
  }
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

// ---- prompts ------------------------------------------------------------------------------------
async function sendPrompt(event) {
  event.preventDefault();
  const text = $("prompt").value.trim();
  if (!text) return;
  const note = $("prompt-note");
  note.className = "note";
  note.textContent = "sending…";
  const body = { messages: [{ role: "user", content: text }], stream: true };
  if (state.current) body.session_id = state.current;
  let response;
  try {
    response = await api("/api/chat", { method: "POST", headers: { "Content-Type": "application/json" },
                                        body: JSON.stringify(body) });
  } catch (error) {
    if (!(error instanceof Refused)) { note.className = "note error"; note.textContent = "cannot reach the server"; }
    return;
  }
  if (!response.ok) {
    note.className = "note error";
    note.textContent = safe(response.status === 409 ? "The session is running a turn: send when it is done."
                                                      : await errorOf(response));
    return;
  }
  $("prompt").value = "";
  note.textContent = "";
  const id = response.headers.get("X-Session-Id");
  if (id && id !== state.current) follow(id);
  loadSessions().catch(() => {});
  readEvents(response, () => {}).catch(() => {});  // the turn's own stream: read, shown through the follower
}
function newSession() {
  stopFollowing();
  state.current = null;
  resetLog();
  history.replaceState(null, "", location.pathname);
  $("title").textContent = "new session";
  setBadge("", "");
  $("log").append(el("p", "muted placeholder", "Type a prompt below to start a new session in serve's folder."));
  renderSessions();
  closeMenu();
  $("prompt").focus();
}

// ---- wiring -------------------------------------------------------------------------------------
function openMenu() {
  $("main").classList.add("menu-open");
  $("menu").setAttribute("aria-expanded", "true");
}
function closeMenu() {
  $("main").classList.remove("menu-open");
  $("menu").setAttribute("aria-expanded", "false");
}
function bind() {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token").value.trim();
    if (!state.token) return;
    sessionStorage.setItem(KEY, state.token);
    $("token").value = "";
    connect();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    state.token = "";
    state.current = null;
    resetLog();
    showLogin("");
  });
  $("menu").addEventListener("click", () => {
    const open = $("main").classList.toggle("menu-open");
    $("menu").setAttribute("aria-expanded", String(open));
  });
  $("new").addEventListener("click", newSession);
  $("prompt-form").addEventListener("submit", sendPrompt);
  window.addEventListener("resize", toEnd);  // a turned phone: the newest entry stays in sight
  let lastTop = 0;
  $("log").addEventListener("scroll", () => {  // only the reader scrolling up unsticks it, not content growing
    const log = $("log");
    if (log.scrollHeight - log.scrollTop - log.clientHeight < 60) state.stick = true;
    else if (log.scrollTop < lastTop) state.stick = false;
    lastTop = log.scrollTop;
  });
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) sendPrompt(event);
  });
}
start();
