// An ACP client (an editor, minus the editor) written with the official TypeScript SDK
// (@agentclientprotocol/sdk). It starts the agent given as JSON in argv[2]
// ({"command": "...", "args": [...], "env": {...}, "cwd": "..."}) and is driven by JSON commands on
// stdin, one per line; it reports JSON events on stdout, one per line.
//
//   {"cmd":"request","id":N,"method":"session/new","params":{...}}
//       -> {"event":"reply","id":N,"ok":true,"result":...} or {"event":"reply","id":N,"ok":false,"error":{...}}
//   {"cmd":"notify","method":"session/cancel","params":{...}}
//   {"cmd":"buffers","files":{"/abs/path":"text"}}   unsaved editor buffers: fs reads see them, fs writes land in them
//   {"cmd":"answer","rid":N,"outcome":{"outcome":"selected","optionId":"..."}}   answers a permission request
//   {"cmd":"close"}
//
// Events: {"event":"update","sessionId","update"} for every session/update, {"event":"permission","rid",
// "params"} for every session/request_permission (it waits for its "answer"; {"event":"permission_withdrawn","rid"}
// when the agent withdraws it with $/cancel_request, answered with the cancelled outcome), {"event":"fs_read","path"},
// {"event":"fs_write","path","content"}, {"event":"agent_exit","code"} when the agent process ends.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import * as readline from 'node:readline';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

const emit = (event) => process.stdout.write(JSON.stringify(event) + '\n');
const spec = JSON.parse(process.argv[2]);
const child = spawn(spec.command, spec.args ?? [],
    { cwd: spec.cwd, env: spec.env, stdio: ['pipe', 'pipe', 'inherit'] });
child.on('exit', (code) => emit({ event: 'agent_exit', code }));

const buffers = new Map();  // path -> unsaved text
const permissions = new Map();  // rid -> resolve
let nextRid = 1;

const app = acp.client({ name: 'coder-tui-tests' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
        emit({ event: 'update', sessionId: params.sessionId, update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
        const rid = nextRid++;
        emit({ event: 'permission', rid, params });
        return new Promise((resolve) => {
            permissions.set(rid, resolve);
            // the agent withdrew it ($/cancel_request: answered elsewhere): an editor closes its dialog and
            // answers with the cancelled outcome, as ACP's cancellation asks
            signal.addEventListener('abort', () => {
                if (!permissions.delete(rid)) return;
                emit({ event: 'permission_withdrawn', rid });
                resolve({ outcome: { outcome: 'cancelled' } });
            }, { once: true });
        });
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
        emit({ event: 'fs_read', path: params.path });
        let text = buffers.get(params.path);
        if (text === undefined) {
            try {
                text = await readFile(params.path, 'utf8');
            } catch {
                throw acp.RequestError.resourceNotFound(params.path);
            }
        }
        if (params.line != null || params.limit != null) {
            const lines = text.split('\n');
            const start = Math.max(0, (params.line ?? 1) - 1);
            text = lines.slice(start, params.limit != null ? start + params.limit : undefined).join('\n');
        }
        return { content: text };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        buffers.set(params.path, params.content);
        emit({ event: 'fs_write', path: params.path, content: params.content });
        return {};
    });

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

await app.connectWith(stream, async (ctx) => {
    const lines = readline.createInterface({ input: process.stdin });
    for await (const line of lines) {
        if (!line.trim()) continue;
        const command = JSON.parse(line);
        if (command.cmd === 'close') break;
        handle(ctx, command);
    }
});
// The agent is stopped and this client ends with it: stdin is still open (the test wrote "close"
// but keeps the pipe), and an open stdin would keep Node running until the test gave up on it.
if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
}
process.exit(0);

function handle(ctx, command) {
    switch (command.cmd) {
    case 'request':
        ctx.request(command.method, command.params).then(
            (result) => emit({ event: 'reply', id: command.id, ok: true, result: result ?? null }),
            (error) => emit({ event: 'reply', id: command.id, ok: false,
                error: { code: error.code, message: error.message, data: error.data ?? null } }));
        break;
    case 'notify':
        ctx.notify(command.method, command.params);
        break;
    case 'buffers':
        for (const [path, text] of Object.entries(command.files)) buffers.set(path, text);
        break;
    case 'answer': {
        const resolve = permissions.get(command.rid);
        permissions.delete(command.rid);
        if (resolve) resolve({ outcome: command.outcome });
        else emit({ event: 'error', message: `no permission request ${command.rid}` });
        break;
    }
    default:
        emit({ event: 'error', message: `unknown command ${command.cmd}` });
    }
}
