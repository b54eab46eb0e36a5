// coder-tui serve's browser view, its second script (after log.js): the token, the session list,
// following a session over its SSE events stream, sending prompts, and the wiring.
"use strict";

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
