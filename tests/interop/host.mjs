// A host peer written with the published OCT packages (what VS Code's extension does, minus VS Code).
// Driven by JSON commands on stdin, one per line; reports JSON events on stdout, one per line.
//
//   {"cmd":"create","server":URL,"name":"host","admit":true|false|"never","files":{"ws/a.py":"..."},
//    "readonly":false}
//   {"cmd":"open","path":"ws/a.py"}                 share a document and make it the active one
//   {"cmd":"type","path":P,"at":N|"end","text":S,"delay":ms}   one transaction per character
//   {"cmd":"insert","path":P,"at":N|"end","text":S}            one transaction (a paste)
//   {"cmd":"replace","path":P,"find":S,"text":S}               replace the first occurrence
//   {"cmd":"wait","path":P,"includes":S?,"excludes":S?,"equals":S?,"matches":REGEX?,"timeout":ms}
//   {"cmd":"text","path":P}   {"cmd":"file","path":P}   {"cmd":"chat","text":S}   {"cmd":"permissions","readonly":B}
//   {"cmd":"close"}
//   {"cmd":"latency","path":P,"prompt":S,"runs":N}  ms from our "\n" to the agent's cursor on that line, per run
//   {"cmd":"presence"}   the other peers' cursors as this editor would draw them: [{path, line}] (1-based)
//   {"cmd":"burst","path":P,"count":N}               N one-character transactions, as fast as we can
import { webcrypto } from 'node:crypto';
import * as readline from 'node:readline';
import { ConnectionProvider, SocketIoTransportProvider, initializeProtocol, VERSION } from 'open-collaboration-protocol';
import { OpenCollaborationYjsProvider } from 'open-collaboration-yjs';
import * as Y from 'yjs';
import * as awarenessProtocol from 'y-protocols/awareness';

initializeProtocol({ cryptoModule: webcrypto });

const emit = (event) => process.stdout.write(JSON.stringify(event) + '\n');
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms));
const trace = (what) => process.stderr.write(`${(performance.now() / 1000).toFixed(3)} ${what}\n`);

// The library's socket.io transport, with its engine's transport changes traced on stderr (shown
// when a test fails): a message lost around a polling -> websocket upgrade shows up there.
const TracedSocketIo = {
    id: SocketIoTransportProvider.id,
    createTransport(url, headers) {
        const transport = SocketIoTransportProvider.createTransport(url, headers);
        const manager = transport.socket.io;
        manager.on('open', () => {
            trace(`engine open (${manager.engine.transport.name})`);
            manager.engine.on('upgrade', t => trace(`engine upgraded to ${t.name}`));
            manager.engine.on('close', reason => trace(`engine closed: ${reason}`));
        });
        manager.on('reconnect', n => trace(`reconnected after ${n} attempts`));
        return transport;
    }
};

const state = { connection: undefined, doc: new Y.Doc(), files: {}, admit: true, readonly: false, identity: undefined, guests: new Map() };
state.awareness = new awarenessProtocol.Awareness(state.doc);

function workspace() {
    const folders = [...new Set(Object.keys(state.files).map(p => p.split('/')[0]))];
    return { name: 'interop', folders: folders.length ? folders : ['ws'] };
}

async function create(cmd) {
    state.admit = cmd.admit === 'never' ? 'never' : cmd.admit !== false;
    state.readonly = !!cmd.readonly;
    state.files = cmd.files ?? {};
    state.statAny = !!cmd.stat_any;  // a host whose stat answers for files it then cannot read
    const server = cmd.server;
    const provider = new ConnectionProvider({
        url: server,
        client: 'interop-host',
        fetch: globalThis.fetch,
        transports: [TracedSocketIo],
        authenticationHandler: async (token, meta) => {
            // the form provider when there is one, else the test server's stand-in for OAuth
            const form = meta.providers.find(p => p.type === 'form');
            const endpoint = new URL(form ? form.endpoint : '/api/login/web-confirm', server).toString();
            const response = await fetch(endpoint, {
                method: 'POST', headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ token, user: cmd.name ?? 'host', name: cmd.name ?? 'host' })
            });
            return response.ok;
        }
    });
    const room = await provider.createRoom({});
    const connection = await provider.connect(room.roomToken);
    state.connection = connection;
    const yjs = new OpenCollaborationYjsProvider(connection, state.doc, state.awareness, { resyncTimer: 10_000 });
    yjs.connect();
    connection.onReconnect(() => yjs.connect());
    const identity = new Promise(resolve => { state.onIdentity = resolve; });
    registerHandlers(connection);
    await identity;  // the server knows the room once our socket is in
    emit({ event: 'room', roomId: room.roomId });
}

function registerHandlers(connection) {
    connection.peer.onJoinRequest(async (_, user) => {
        trace(`join request from ${user.name}`);
        emit({ event: 'join_request', user });
        if (state.admit === 'never') return new Promise(() => {});  // a host who never answers
        return state.admit ? { workspace: workspace() } : undefined;
    });
    connection.peer.onInfo((_, peer) => {
        state.identity = peer;
        state.awareness.setLocalStateField('peer', peer.id);
        state.onIdentity?.(peer);
    });
    connection.room.onJoin(async (_, peer) => {
        const guests = [...state.guests.values()];
        state.guests.set(peer.id, peer);
        await connection.peer.init(peer.id, {
            protocol: VERSION, host: state.identity, guests, capabilities: {},
            permissions: { readonly: state.readonly }, workspace: workspace()
        });
        emit({ event: 'peer_joined', peer: { id: peer.id, name: peer.name } });
    });
    connection.room.onLeave((_, peer) => state.guests.delete(peer.id) && emit({ event: 'peer_left', peer: { id: peer.id, name: peer.name } }));
    connection.editor.onOpen((_, path) => { share(path); emit({ event: 'editor_open', path }); });
    connection.chat.onMessage((origin, message) => emit({ event: 'chat', origin, text: message }));
    const enc = new TextEncoder();
    connection.fs.onReadFile((_, path) => {
        if (!(path in state.files)) throw new Error(`no such file ${path}`);
        return { content: enc.encode(state.files[path]) };
    });
    connection.fs.onStat((_, path) => {
        const isDir = Object.keys(state.files).some(p => p.startsWith(path + '/')) || !path.includes('/');
        if (!(path in state.files) && !isDir && !state.statAny) throw new Error(`no such file ${path}`);
        return { type: isDir && !(path in state.files) ? 2 : 1, mtime: 0, ctime: 0, size: (state.files[path] ?? '').length };
    });
    connection.fs.onReaddir((_, path) => {
        const entries = {};
        for (const file of Object.keys(state.files)) {
            if (!file.startsWith(path + '/')) continue;
            const rest = file.slice(path.length + 1).split('/');
            entries[rest[0]] = rest.length > 1 ? 2 : 1;
        }
        return entries;
    });
    connection.fs.onWriteFile((_, path, data) => {
        state.files[path] = new TextDecoder().decode(data.content);
        emit({ event: 'write_file', path });
    });
}

function share(path) {
    const text = state.doc.getText(path);
    if (text.length === 0 && state.files[path]) {
        text.insert(0, state.files[path]);
    }
    return text;
}

function offset(text, at) {
    return at === 'end' || at === undefined ? text.length : at;
}

async function run(cmd) {
    switch (cmd.cmd) {
        case 'create': return create(cmd);
        case 'open': {
            share(cmd.path);
            state.awareness.setLocalStateField('selection', { path: cmd.path, textSelections: [] });
            return emit({ event: 'opened', path: cmd.path });
        }
        case 'type': {
            const text = share(cmd.path);
            let at = offset(text, cmd.at);
            for (const ch of cmd.text) {
                text.insert(at, ch);
                at += ch.length;
                if (cmd.delay) await sleep(cmd.delay);
            }
            return emit({ event: 'typed', path: cmd.path });
        }
        case 'insert': {
            const text = share(cmd.path);
            text.insert(offset(text, cmd.at), cmd.text);
            return emit({ event: 'inserted', path: cmd.path });
        }
        case 'replace': {
            const text = share(cmd.path);
            const index = text.toString().indexOf(cmd.find);
            if (index < 0) return emit({ event: 'error', message: `not found: ${cmd.find}` });
            state.doc.transact(() => { text.delete(index, cmd.find.length); text.insert(index, cmd.text); });
            return emit({ event: 'replaced', path: cmd.path });
        }
        case 'wait': return wait(cmd);
        case 'latency': return latency(cmd);
        case 'presence': return emit({ event: 'presence', cursors: presence() });
        case 'burst': {
            const text = share(cmd.path);
            const started = performance.now();
            for (let i = 0; i < cmd.count; i++) text.insert(text.length, 'x');
            return emit({ event: 'burst', ms: performance.now() - started });
        }
        case 'text': return emit({ event: 'text', path: cmd.path, text: state.doc.getText(cmd.path).toString() });
        case 'file': return emit({ event: 'file', path: cmd.path, text: state.files[cmd.path] ?? null });
        case 'chat': await state.connection.chat.sendMessage(cmd.text); return emit({ event: 'chat_sent' });
        case 'permissions': {
            state.readonly = !!cmd.readonly;
            await state.connection.room.updatePermissions({ readonly: state.readonly });
            return emit({ event: 'permissions_sent' });
        }
        case 'close': {
            await state.connection.room.leave();
            emit({ event: 'closed' });
            await sleep(100);
            process.exit(0);
        }
        default: return emit({ event: 'error', message: `unknown command ${cmd.cmd}` });
    }
}

async function wait(cmd) {
    const deadline = Date.now() + (cmd.timeout ?? 10_000);
    const ok = (s) => (cmd.includes === undefined || s.includes(cmd.includes))
        && (cmd.matches === undefined || new RegExp(cmd.matches, 'm').test(s))
        && (cmd.excludes === undefined || !s.includes(cmd.excludes))
        && (cmd.equals === undefined || s === cmd.equals);
    let current = state.doc.getText(cmd.path).toString();
    while (!ok(current)) {
        if (Date.now() > deadline) return emit({ event: 'wait_timeout', path: cmd.path, text: current });
        await sleep(10);
        current = state.doc.getText(cmd.path).toString();
    }
    return emit({ event: 'waited', path: cmd.path, text: current });
}

// Where the other peers' cursors are (awareness selections, resolved as an editor resolves them).
function presence() {
    const found = [];
    for (const [client, peer] of state.awareness.getStates()) {
        const selection = peer?.selection;
        if (client === state.doc.clientID || !selection?.path) continue;
        for (const range of selection.textSelections ?? []) {
            const at = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(range.start), state.doc);
            if (!at) continue;
            const before = at.type.toString().slice(0, at.index);
            found.push({ path: selection.path, line: before.split('\n').length });
        }
    }
    return found;
}

async function latency(cmd) {
    const text = share(cmd.path);
    const results = [];
    for (let run = 0; run < cmd.runs; run++) {
        const prompt = `${cmd.prompt} ${run}:`;
        text.insert(text.length, prompt);
        await sleep(100);
        const line = text.toString().split('\n').length;  // the prompt's line
        const seen = new Promise(resolve => {
            const check = () => {
                if (presence().some(p => p.path === cmd.path && p.line === line)) {
                    state.awareness.off('change', check);
                    resolve(performance.now());
                }
            };
            state.awareness.on('change', check);
        });
        const started = performance.now();
        text.insert(text.length, '\n');
        results.push((await seen) - started);
    }
    return emit({ event: 'latency', ms: results });
}

const lines = readline.createInterface({ input: process.stdin });
let chain = Promise.resolve();
lines.on('line', line => {
    if (!line.trim()) return;
    chain = chain.then(() => run(JSON.parse(line))).catch(err => emit({ event: 'error', message: String(err?.message ?? err) }));
});
lines.on('close', () => chain.then(() => process.exit(0)));
