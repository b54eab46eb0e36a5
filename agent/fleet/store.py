"""Every read and write of a batch in Redis. Where workers and `fleet approve` race (claiming a
job, parking it, answering it, finishing an attempt), one Lua script does the whole step, so
Redis runs it atomically.

Keys, under `coder-tui:fleet:`: `batches` (a sorted set of batch ids by time), and per batch B
`B` (its spec), `B:job:N` (a job's hash), `B:job:N:lease` (the running attempt, renewed while it
lives), `B:job:N:answers` (answers for a waiting approval), `B:job:N:record` (its session record),
`B:running` (jobs holding a concurrency slot), `B:spent` (cost and tokens), `B:published:REPO`
(the publish marker) and `B:events` (a stream of what happened, for progress).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from agent.fleet.model import Answer, Approval, BatchSpec, Job, State
from agent.fleet.settings import LEASE

if TYPE_CHECKING:
    from redis import Redis

PREFIX = "coder-tui:fleet:"
KEEP = 30 * 24 * 3600  # a batch's keys expire a month after its last job finished
RECORD_LIMIT = 4 * 1024 * 1024  # a session record larger than this stays on its worker only
DIFF_LIMIT = 256 * 1024

# KEYS: job, lease, running, spent, events. ARGV: attempt id, worker, lease ms, now, concurrency (0: none),
# max cost (""), max tokens (""), job number.
CLAIM = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 'gone' end
if state == 'done' or state == 'failed' or state == 'parked' then return 'skip' end
if (state == 'running' or state == 'waiting') and redis.call('EXISTS', KEYS[2]) == 1 then return 'busy' end
local limit = tonumber(ARGV[5])
if limit > 0 and redis.call('SISMEMBER', KEYS[3], ARGV[8]) == 0 and redis.call('SCARD', KEYS[3]) >= limit then
  return 'full'
end
if (ARGV[6] ~= '' and tonumber(redis.call('HGET', KEYS[4], 'cost') or '0') >= tonumber(ARGV[6])) or
   (ARGV[7] ~= '' and tonumber(redis.call('HGET', KEYS[4], 'tokens') or '0') >= tonumber(ARGV[7])) then
  local note = 'not started: the batch budget is spent'
  redis.call('HSET', KEYS[1], 'state', 'failed', 'reason', 'budget', 'note', note, 'finished', ARGV[4])
  redis.call('XADD', KEYS[5], 'MAXLEN', '~', 20000, '*', 'job', ARGV[8], 'kind', 'failed', 'text', note)
  return 'budget'
end
redis.call('SADD', KEYS[3], ARGV[8])
redis.call('HSET', KEYS[1], 'state', 'running', 'worker', ARGV[2], 'attempt_id', ARGV[1], 'started', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
return 'run'
"""
# KEYS: lease. ARGV: attempt id, lease ms. 1 while the lease is ours.
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
# KEYS: job, lease, running, events. ARGV: attempt id, job number, state, the event's text, then
# field, value pairs. 1 when the job was ours (its state and its event written together).
FINISH = """
if redis.call('HGET', KEYS[1], 'attempt_id') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[3], unpack(ARGV, 5))
redis.call('SREM', KEYS[3], ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('XADD', KEYS[4], 'MAXLEN', '~', 20000, '*', 'job', ARGV[2], 'kind', ARGV[3], 'text', ARGV[4])
return 1
"""
# KEYS: job, answers, lease, running, events. ARGV: attempt id, job number, the event's text. An
# answer that came meanwhile, or false after parking the job.
PARK = """
local answer = redis.call('LPOP', KEYS[2])
if answer then return answer end
if redis.call('HGET', KEYS[1], 'attempt_id') ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'state', 'parked')
redis.call('SREM', KEYS[4], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
redis.call('XADD', KEYS[5], 'MAXLEN', '~', 20000, '*', 'job', ARGV[2], 'kind', 'parked', 'text', ARGV[3])
return false
"""
# KEYS: job, answers. ARGV: answer. The job's state before the answer.
ANSWER = """
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'waiting' then redis.call('RPUSH', KEYS[2], ARGV[1]) end
if state == 'parked' then redis.call('HSET', KEYS[1], 'state', 'queued', 'answer', ARGV[1], 'approval', '') end
return state or 'gone'
"""
# KEYS: marker. ARGV: attempt id, the attempt it may take over from ("" when none).
TAKE_MARKER = """
local held = redis.call('GET', KEYS[1])
if not held or held == ARGV[2] then redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1] end
return held
"""


class FleetStore:
    """The batches in one Redis (a redis-py client that decodes responses)."""

    def __init__(self, client: Redis) -> None:
        self.r = client
        self._claim = client.register_script(CLAIM)
        self._renew = client.register_script(RENEW)
        self._finish = client.register_script(FINISH)
        self._park = client.register_script(PARK)
        self._answer = client.register_script(ANSWER)
        self._take = client.register_script(TAKE_MARKER)

    # -- keys ---------------------------------------------------------------------------------
    @staticmethod
    def key(batch: str, *parts: object) -> str:
        return PREFIX + ":".join([batch, *(str(p) for p in parts)])

    def _job_keys(self, batch: str, number: int) -> tuple[str, str]:
        return self.key(batch, "job", number), self.key(batch, "job", number, "lease")

    # -- batches ------------------------------------------------------------------------------
    def create(self, spec: BatchSpec, targets: list[tuple[str, str]]) -> None:
        """The batch and its jobs (target, kind), all queued, in one transaction."""
        pipe = self.r.pipeline()
        pipe.set(self.key(spec.id), spec.model_dump_json())
        for number, (target, kind) in enumerate(targets, 1):
            pipe.hset(self.key(spec.id, "job", number), mapping={"number": number, "target": target, "kind": kind,
                                                                "state": "queued", "attempts": 0})
        pipe.zadd(PREFIX + "batches", {spec.id: spec.created})
        pipe.xadd(self.key(spec.id, "events"), {"job": 0, "kind": "created", "text": f"{len(targets)} job(s) queued"})
        pipe.execute()

    def batch(self, batch: str) -> BatchSpec | None:
        text = _string(self.r.get(self.key(batch)))
        return BatchSpec.model_validate_json(text) if text else None

    def find(self, prefix: str) -> list[str]:
        """Batch ids starting with `prefix` (newest first)."""
        return [b for b in self.batches() if b.startswith(prefix)]

    def batches(self, limit: int = 1000) -> list[str]:
        return [str(b) for b in self.r.zrevrange(PREFIX + "batches", 0, limit - 1)]

    def job(self, batch: str, number: int) -> Job | None:
        data = self.r.hgetall(self.key(batch, "job", number))
        return Job.from_hash(_strings(data)) if data else None

    def jobs(self, batch: str, count: int) -> list[Job]:
        pipe = self.r.pipeline()
        for number in range(1, count + 1):
            pipe.hgetall(self.key(batch, "job", number))
        return [Job.from_hash(_strings(data)) for data in pipe.execute() if data]

    def spent(self, batch: str) -> tuple[float, int]:
        data = self.r.hgetall(self.key(batch, "spent"))
        return float(data.get("cost") or 0.0), int(data.get("tokens") or 0)

    # -- events -------------------------------------------------------------------------------
    def event(self, batch: str, number: int, kind: str, text: str) -> None:
        self.r.xadd(self.key(batch, "events"), {"job": number, "kind": kind, "text": text}, maxlen=20000,
                    approximate=True)

    def events(self, batch: str, after: str = "0", block: float | None = None) -> list[tuple[str, dict[str, str]]]:
        """Events after the id `after` (waiting up to `block` seconds for one)."""
        answer: Any = self.r.xread({self.key(batch, "events"): after}, count=500,
                                   block=int(block * 1000) if block else None)
        return [(str(entry_id), _strings(fields)) for _, entries in answer or [] for entry_id, fields in entries]

    # -- a worker's attempt --------------------------------------------------------------------
    def claim(self, spec: BatchSpec, number: int, attempt: str, worker: str) -> str:
        """run (the job is ours now), skip (finished or parked), busy (a live attempt has it),
        full (the batch's concurrency is reached), budget (the batch budget is spent: failed),
        or gone (no such job)."""
        job, lease = self._job_keys(spec.id, number)
        args: list[str | int | float] = [attempt, worker, int(LEASE * 1000), time.time(), spec.concurrency or 0,
                "" if spec.max_cost is None else spec.max_cost, "" if spec.max_tokens is None else spec.max_tokens,
                number]
        keys = [job, lease, self.key(spec.id, "running"), self.key(spec.id, "spent"), self.key(spec.id, "events")]
        return str(self._claim(keys=keys, args=args))

    def renew(self, batch: str, number: int, attempt: str) -> bool:
        """Renew the attempt's lease: False when it is not ours any more (another worker took over)."""
        return bool(self._renew(keys=[self._job_keys(batch, number)[1]], args=[attempt, int(LEASE * 1000)]))

    def lease_alive(self, batch: str, number: int) -> bool:
        return bool(self.r.exists(self._job_keys(batch, number)[1]))

    def update(self, batch: str, number: int, **fields: Any) -> None:
        self.r.hset(self.key(batch, "job", number), mapping={k: _value(v) for k, v in fields.items()})

    def finish(self, batch: str, number: int, attempt: str, state: State, **fields: Any) -> bool:
        """End the attempt in `state` with these outcome fields and its `note` as the event's text
        (False: the job is not ours any more)."""
        job, lease = self._job_keys(batch, number)
        values = {"finished": time.time(), **fields}
        flat = [part for k, v in values.items() for part in (k, _value(v))]
        keys = [job, lease, self.key(batch, "running"), self.key(batch, "events")]
        ours = bool(self._finish(keys=keys, args=[attempt, number, state, str(fields.get("note", "")), *flat]))
        if ours:
            self._expire(batch, number)
        return ours

    def _expire(self, batch: str, number: int) -> None:
        pipe = self.r.pipeline()
        for key in (self.key(batch), self.key(batch, "job", number), self.key(batch, "job", number, "record"),
                    self.key(batch, "spent"), self.key(batch, "events")):
            pipe.expire(key, KEEP)
        pipe.execute()

    def spend(self, batch: str, number: int, cost: float, tokens: int) -> tuple[float, int]:
        """Add a request's cost and tokens to the job and the batch; the batch's totals after it."""
        pipe = self.r.pipeline()
        pipe.hincrbyfloat(self.key(batch, "spent"), "cost", cost)
        pipe.hincrby(self.key(batch, "spent"), "tokens", tokens)
        pipe.hincrbyfloat(self.key(batch, "job", number), "cost", cost)
        pipe.hincrby(self.key(batch, "job", number), "tokens", tokens)
        total_cost, total_tokens, _, _ = pipe.execute()
        return float(total_cost), int(total_tokens)

    # -- approvals ----------------------------------------------------------------------------
    def wait_for_answer(self, batch: str, number: int, approval: Approval, timeout: float) -> Answer | None:
        """Say the job waits for `approval`, then wait up to `timeout` seconds for an answer."""
        self.update(batch, number, state="waiting", approval=approval)
        self.event(batch, number, "waiting", f"asks to run {approval.what}")
        if timeout <= 0:
            return None
        got = self.r.blpop([self.key(batch, "job", number, "answers")], timeout=max(1, round(timeout)))
        return Answer.model_validate_json(got[1]) if got else None

    def park(self, batch: str, number: int, attempt: str, text: str) -> Answer | None:
        """Park the job (no worker waits for it now), or the answer that came just before."""
        job, lease = self._job_keys(batch, number)
        keys = [job, self.key(batch, "job", number, "answers"), lease, self.key(batch, "running"),
                self.key(batch, "events")]
        got = self._park(keys=keys, args=[attempt, number, text])
        return Answer.model_validate_json(got) if got else None

    def answer(self, batch: str, number: int, answer: Answer) -> str:
        """Answer the job's approval: the state it was in (waiting: its worker goes on; parked: it is
        queued again and the caller sends it; anything else: there was nothing to answer)."""
        job = self.key(batch, "job", number)
        return str(self._answer(keys=[job, self.key(batch, "job", number, "answers")], args=[answer.model_dump_json()]))

    # -- session records ----------------------------------------------------------------------
    def save_record(self, batch: str, number: int, text: str) -> bool:
        if len(text.encode("utf-8")) > RECORD_LIMIT:
            return False
        self.r.set(self.key(batch, "job", number, "record"), text)
        return True

    def record(self, batch: str, number: int) -> str | None:
        return _string(self.r.get(self.key(batch, "job", number, "record")))

    # -- publishing ---------------------------------------------------------------------------
    def marker(self, batch: str, repository: str) -> str | None:
        return _string(self.r.get(self.key(batch, "published", repository.lower())))

    def take_marker(self, batch: str, repository: str, attempt: str, dead: str = "") -> bool:
        """Hold the publish marker of (batch, repository): True when this attempt holds it now (it
        was free, or held by `dead`, an attempt that died before it published)."""
        held = self._take(keys=[self.key(batch, "published", repository.lower())], args=[attempt, dead])
        return str(held) == attempt

    def mark_published(self, batch: str, repository: str, commit: str) -> None:
        self.r.set(self.key(batch, "published", repository.lower()), f"published:{commit}", ex=KEEP)


def _string(value: Any) -> str | None:
    return None if value is None else str(value)


def _strings(data: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(data).items()}


def _value(value: Any) -> str | int | float:
    if isinstance(value, (int, float, str)):
        return value
    if value is None:
        return ""
    if hasattr(value, "model_dump_json"):
        return str(value.model_dump_json())
    return json.dumps(value)
