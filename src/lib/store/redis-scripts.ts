/**
 * The Lua scripts behind RedisStore: one per operation that reads before it writes, so that
 * check-then-set runs atomically on the server. Each script touches only KEYS[1] (the caller's
 * key, which carries its own {hash tag}), so every script is valid on Redis Cluster.
 *
 * An idempotency record is a hash: state (in_flight | completed), fingerprint, and either owner
 * (in flight) or response (completed, the JSON of stored-response.ts). Needs Redis >= 5, where
 * scripts replicate their effects, so that TIME may precede a write.
 */

/** ARGV: fingerprint, owner, lockTtlMs. Reply: {'acquired'} | {'mismatch', fp} | {'completed', json} | {'in_flight', ms}. */
const idempotencyBegin = `
local record = redis.call('HMGET', KEYS[1], 'state', 'fingerprint', 'response')
local state = record[1]
if not state then
  redis.call('HSET', KEYS[1], 'state', 'in_flight', 'fingerprint', ARGV[1], 'owner', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'acquired'}
end
if record[2] ~= ARGV[1] then
  return {'mismatch', record[2]}
end
if state == 'completed' then
  return {'completed', record[3]}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1 then
  ttl = 1
end
return {'in_flight', ttl}
`;

/** ARGV: owner, response JSON, ttlMs. Reply: 1 when stored, 0 when the caller no longer owns the key. */
const idempotencyComplete = `
local record = redis.call('HMGET', KEYS[1], 'state', 'owner')
if record[1] ~= 'in_flight' or record[2] ~= ARGV[1] then
  return 0
end
redis.call('HDEL', KEYS[1], 'owner')
redis.call('HSET', KEYS[1], 'state', 'completed', 'response', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** ARGV: owner. Reply: 1 when the lock was dropped. */
const idempotencyRelease = `
local record = redis.call('HMGET', KEYS[1], 'state', 'owner')
if record[1] == 'in_flight' and record[2] == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

/**
 * ARGV: limit, periodMs. Reply: {allowed 0|1, remaining, resetMs, retryAfterMs}.
 * A copy of gcraStep in gcra.ts, on the server's clock so that processes with skewed clocks agree.
 * The TAT is written with %.0f because Lua 5.1 would print a 16-digit number as 1.7e+15.
 */
const rateLimit = `
local limit = tonumber(ARGV[1])
local period_ms = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = math.floor(period_ms * 1000 / limit)
local tolerance = limit * interval
local tat = now
local stored = tonumber(redis.call('GET', KEYS[1]) or '')
if stored and stored > now then
  tat = stored
end
local new_tat = tat + interval
local allow_at = new_tat - tolerance
if allow_at > now then
  return {0, 0, math.ceil((tat - now) / 1000), math.ceil((allow_at - now) / 1000)}
end
local ttl_ms = math.ceil((new_tat - now) / 1000)
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', ttl_ms)
local remaining = math.floor((tolerance - (new_tat - now)) / interval)
return {1, remaining, ttl_ms, 0}
`;

export const REDIS_SCRIPTS = { idempotencyBegin, idempotencyComplete, idempotencyRelease, rateLimit } as const;

export type RedisScriptName = keyof typeof REDIS_SCRIPTS;
