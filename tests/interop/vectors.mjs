// Crypto and msgpack values produced and checked by the published open-collaboration-protocol.
// One JSON request per stdin line, one JSON answer per stdout line. In JSON, byte arrays are
// {"$bytes": hex} and JS undefined is {"$undefined": true}.
//
//   {"op":"keypair"}                                    -> {publicKey, privateKey}
//   {"op":"encrypt","kind":K,"content":V,"recipients":[{peerId,publicKey,supportedCompression}]}
//                                                       -> {hex}   (msgpack of the encrypted message)
//   {"op":"decrypt","privateKey":P,"hex":H}              -> {message}  (content decrypted)
//   {"op":"pack","value":V}                              -> {hex}
//   {"op":"unpack","hex":H}                              -> {value}
import { webcrypto } from 'node:crypto';
import * as readline from 'node:readline';
import { Encryption, Encoding, initializeProtocol, VERSION } from 'open-collaboration-protocol';

initializeProtocol({ cryptoModule: webcrypto });

const toHex = (bytes) => Buffer.from(bytes).toString('hex');
const fromHex = (hex) => new Uint8Array(Buffer.from(hex, 'hex'));

function revive(value) {
    if (Array.isArray(value)) return value.map(revive);
    if (value && typeof value === 'object') {
        if ('$bytes' in value) return fromHex(value.$bytes);
        if ('$undefined' in value) return undefined;
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v)]));
    }
    return value;
}

function describe(value) {
    if (value === undefined) return { $undefined: true };
    if (value instanceof Uint8Array) return { $bytes: toHex(value) };
    if (typeof value === 'bigint') return { $bigint: value.toString() };
    if (Array.isArray(value)) return value.map(describe);
    if (value && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describe(v)]));
    }
    return value;
}

async function handle(request) {
    switch (request.op) {
        case 'keypair': return Encryption.generateKeyPair();
        case 'encrypt': {
            const message = {
                version: VERSION, kind: request.kind ?? 'notification', origin: '', target: request.target ?? 'py',
                metadata: { encryption: { keys: [] }, compression: { algorithm: 'none' } },
                content: revive(request.content)
            };
            const encrypted = await Encryption.encrypt(message, { symmetricKey: Encryption.generateSymKey(), cache: {} }, ...request.recipients);
            return { hex: toHex(Encoding.encode(encrypted)) };
        }
        case 'decrypt': {
            const message = Encoding.decode(fromHex(request.hex));
            const decrypted = await Encryption.decrypt(message, { privateKey: request.privateKey, cache: {} });
            return { message: describe(decrypted) };
        }
        case 'pack': return { hex: toHex(Encoding.encode(revive(request.value))) };
        case 'unpack': return { value: describe(Encoding.decode(fromHex(request.hex))) };
        default: throw new Error(`unknown op ${request.op}`);
    }
}

const lines = readline.createInterface({ input: process.stdin });
let chain = Promise.resolve();
lines.on('line', line => {
    if (!line.trim()) return;
    chain = chain.then(async () => {
        try {
            process.stdout.write(JSON.stringify({ ok: true, ...(await handle(JSON.parse(line))) }) + '\n');
        } catch (err) {
            process.stdout.write(JSON.stringify({ ok: false, error: String(err?.message ?? err) }) + '\n');
        }
    });
});
lines.on('close', () => chain.then(() => process.exit(0)));
