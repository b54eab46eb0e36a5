// An editor's side of `coder-tui serve`: Node's fetch, and the eventsource-parser package for the stream.
//
//   node sse_client.mjs URL TOKEN BODY_JSON [DECISION ...]
//
// POSTs BODY_JSON to URL/api/chat and prints one JSON line per SSE event: {"event": DATA, "sse":
// {"id", "event"}}. An `approval_required` event is answered with the next DECISION (allow_once,
// allow_all, deny, stop) through POST URL/api/approvals/ID. Then it prints
// {"status": HTTP status, "session_header": X-Session-Id} and exits 0 when the stream ended with
// {"done": true}, else 1.
import { createParser } from "eventsource-parser";

const [url, token, body, ...decisions] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "text/event-stream" };

const response = await fetch(`${url}/api/chat`, { method: "POST", headers, body });
const answers = [];
let last = null;
const parser = createParser({
  onEvent(message) {
    const data = JSON.parse(message.data);
    last = data;
    console.log(JSON.stringify({ event: data, sse: { id: message.id ?? null, event: message.event ?? null } }));
    if (data.type === "approval_required") {
      const decision = decisions.shift() ?? "deny";
      answers.push(fetch(`${url}/api/approvals/${data.id}`, {
        method: "POST", headers, body: JSON.stringify({ decision, feedback: `answered ${decision} from Node` }),
      }).then((r) => r.json()));
    }
  },
  onError(error) {
    console.log(JSON.stringify({ parse_error: String(error) }));
  },
});

const decoder = new TextDecoder();
for await (const chunk of response.body) {
  parser.feed(decoder.decode(chunk, { stream: true }));
}
for (const answer of await Promise.all(answers)) {
  console.log(JSON.stringify({ approval_answer: answer }));
}
console.log(JSON.stringify({ status: response.status, session_header: response.headers.get("x-session-id") }));
process.exit(last && last.done === true ? 0 : 1);
