"""The class poll in Redis, shared by every replica (``ATTN_EXPLORER_REDIS=redis://host:port/db``).

Keys (``ae:poll:`` first), each with a Redis expiry of the idle timeout, renewed whenever the
lesson is used, so an abandoned lesson leaves nothing behind even if no process ever looks again:

- ``lessons``: a sorted set, lesson code -> order of last use (at most ``MAX_LESSONS``, the oldest
  dropped), ``used``: a hash, lesson code -> time of last use (idle ones dropped), ``seq``: the order;
- ``<code>:qs``: a sorted set, question id -> order of last use (at most ``MAX_QUESTIONS`` per lesson);
- ``<code>:a:<qid>``: a hash, session id -> key token (one field per session: a session's new
  answer replaces its old one; answers from two replicas at once are two fields, none lost; at most
  ``MAX_ANSWERS`` fields);
- ``<code>:m:<qid>``: the question's description for the teacher's CSV (its label, the key tokens).

Every operation is one Lua script, so it is atomic: the idle lessons are dropped, the limits
enforced and the expiries renewed in the same step as the answer. The scripts name keys they
compute, so this is for one Redis server (not Redis Cluster). The idle timeout is also checked
against the caller's clock (``used``), which the tests move.

Never a long wait on the store: connecting and each reply have a short timeout, no retries, and
after a failure the store is not tried again for ``RETRY_S`` (calls raise ``PollUnavailable`` at
once), so a page whose store is down costs at most one short timeout now and then.
"""

from __future__ import annotations

import json
import os
import threading
import time

from . import base as poll
from .base import PollUnavailable, export_rows, question_id

PREFIX = "ae:poll:"
TIMEOUT_S = 0.3  # connect and reply
RETRY_S = 2.0
TIMINGS_ENV = "ATTN_EXPLORER_POLL_TIMINGS"  # a file: each answer's round trip (s) appended, for the benchmark

_COMMON = """
local p = ARGV[1]
local code = ARGV[2]
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local max_lessons = tonumber(ARGV[5])
local L = p .. 'lessons'
local U = p .. 'used'
local ms = math.ceil(ttl * 1000)
local function drop(c)
  local qs = p .. c .. ':qs'
  for _, q in ipairs(redis.call('ZRANGE', qs, 0, -1)) do
    redis.call('DEL', p .. c .. ':a:' .. q, p .. c .. ':m:' .. q)
  end
  redis.call('DEL', qs)
  redis.call('ZREM', L, c)
  redis.call('HDEL', U, c)
end
local function seq()
  local n = redis.call('INCR', p .. 'seq')
  redis.call('PEXPIRE', p .. 'seq', ms)
  return n
end
local function touch(create)
  local used = redis.call('HGETALL', U)
  for i = 1, #used, 2 do
    if now - tonumber(used[i + 1]) > ttl then drop(used[i]) end
  end
  if not create and not redis.call('ZSCORE', L, code) then return false end
  redis.call('ZADD', L, seq(), code)
  redis.call('HSET', U, code, now)
  local n = redis.call('ZCARD', L)
  if n > max_lessons then
    for _, old in ipairs(redis.call('ZRANGE', L, 0, n - max_lessons - 1)) do drop(old) end
  end
  redis.call('PEXPIRE', L, ms)
  redis.call('PEXPIRE', U, ms)
  local qs = p .. code .. ':qs'
  for _, q in ipairs(redis.call('ZRANGE', qs, 0, -1)) do
    redis.call('PEXPIRE', p .. code .. ':a:' .. q, ms)
    redis.call('PEXPIRE', p .. code .. ':m:' .. q, ms)
  end
  redis.call('PEXPIRE', qs, ms)
  return true
end
"""

ANSWER = (
    _COMMON
    + """
local qid, session, token, meta = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local max_questions, max_answers = tonumber(ARGV[10]), tonumber(ARGV[11])
local qs = p .. code .. ':qs'
local a = p .. code .. ':a:' .. qid
touch(true)
redis.call('ZADD', qs, seq(), qid)
local n = redis.call('ZCARD', qs)
if n > max_questions then
  for _, old in ipairs(redis.call('ZRANGE', qs, 0, n - max_questions - 1)) do
    redis.call('DEL', p .. code .. ':a:' .. old, p .. code .. ':m:' .. old)
    redis.call('ZREM', qs, old)
  end
end
local ok = 1
if redis.call('HEXISTS', a, session) == 0 and redis.call('HLEN', a) >= max_answers then
  ok = 0
else
  redis.call('HSET', a, session, token)
end
if meta ~= '' then redis.call('SET', p .. code .. ':m:' .. qid, meta) end
redis.call('PEXPIRE', a, ms)
redis.call('PEXPIRE', p .. code .. ':m:' .. qid, ms)
redis.call('PEXPIRE', qs, ms)
return ok
"""
)

TALLY = (
    _COMMON
    + """
if not touch(false) then return {} end
return redis.call('HVALS', p .. code .. ':a:' .. ARGV[6])
"""
)

EXPORT = (
    _COMMON
    + """
if not touch(false) then return {} end
local out = {}
for _, q in ipairs(redis.call('ZRANGE', p .. code .. ':qs', 0, -1)) do
  local meta = redis.call('GET', p .. code .. ':m:' .. q) or ''
  table.insert(out, {meta, redis.call('HVALS', p .. code .. ':a:' .. q)})
end
return out
"""
)

END = (
    _COMMON
    + """
drop(code)
return 1
"""
)


class RedisStore:
    """The poll's interface (see ``attn_core.classroom.store.Polls``) over one Redis server."""

    def __init__(
        self,
        url: str,
        *,
        clock=time.time,
        max_lessons=None,
        max_questions=None,
        max_answers=None,
        timeout_s=None,
        prefix: str = PREFIX,
        reply_timeout: float = TIMEOUT_S,
    ) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("not a redis:// URL (e.g. redis://127.0.0.1:6379/0)")
        self.url = url
        self.r = redis.Redis.from_url(
            url,
            socket_timeout=reply_timeout,
            socket_connect_timeout=reply_timeout,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
            health_check_interval=0,
            max_connections=256,  # a connection per script thread at once; more fail (unavailable), never wait
        )
        self.errors = (redis.RedisError, OSError)
        self.clock = clock
        self.prefix = prefix
        self._limits = (max_lessons, max_questions, max_answers, timeout_s)
        self._scripts = {name: self.r.register_script(src) for name, src in _SCRIPTS.items()}
        self._lock = threading.Lock()
        self._down_until = 0.0
        self.last_error = ""

    def limits(self) -> tuple[int, int, int, float]:
        defaults = (poll.MAX_LESSONS, poll.MAX_QUESTIONS, poll.MAX_ANSWERS, poll.TIMEOUT_S)
        return tuple(d if v is None else v for v, d in zip(self._limits, defaults, strict=True))

    def _run(self, name: str, code: str, *more):
        if not poll.valid_code(code):
            raise ValueError(f"not a lesson code: {code!r}")
        now = time.monotonic()
        with self._lock:
            if now < self._down_until:
                raise PollUnavailable(self.last_error)
        max_lessons, max_questions, max_answers, timeout_s = self.limits()
        args = [self.prefix, code, repr(float(self.clock())), repr(float(timeout_s)), max_lessons, *more]
        if name == "answer":
            args += [max_questions, max_answers]
        try:
            return self._scripts[name](args=args)
        except self.errors as err:
            with self._lock:
                self._down_until = time.monotonic() + RETRY_S
                self.last_error = f"{type(err).__name__}: {err}"
            raise PollUnavailable(self.last_error) from err

    def answer(self, code: str, question: tuple, session: str, token: int, meta: dict | None = None) -> bool:
        t0 = time.perf_counter()
        meta_text = json.dumps(meta, ensure_ascii=False) if meta is not None else ""
        ok = self._run("answer", code, question_id(question), session, int(token), meta_text)
        path = os.environ.get(TIMINGS_ENV)
        if path:
            with open(path, "a") as f:  # one short line per write: appends from several processes do not mix
                f.write(f"{time.perf_counter() - t0:.6f}\n")
        return bool(ok)

    def tally(self, code: str, question: tuple, n_tokens: int) -> list[int]:
        counts = [0] * n_tokens
        for token in self._run("tally", code, question_id(question)):
            t = int(token)
            if 0 <= t < n_tokens:
                counts[t] += 1
        return counts

    def questions(self, code: str) -> list[tuple[dict, list[int]]]:
        return [
            (json.loads(meta) if meta else {}, [int(t) for t in tokens]) for meta, tokens in self._run("export", code)
        ]

    def export(self, code: str) -> list[tuple[str, str, int]]:
        return export_rows(self.questions(code))

    def end(self, code: str) -> None:
        self._run("end", code)


_SCRIPTS = {"answer": ANSWER, "tally": TALLY, "export": EXPORT, "end": END}


class Unusable:
    """A store named by a URL that cannot be used: every call says the poll is unavailable."""

    def __init__(self, reason: str) -> None:
        self.last_error = reason

    def _fail(self, *_args, **_kw):
        raise PollUnavailable(self.last_error)

    answer = tally = export = questions = end = _fail
