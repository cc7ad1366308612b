/**
 * The Lua scripts behind RedisStore: one per operation that reads before it writes, so that
 * check-then-set runs atomically on the server. Each script but the epoch marker's touches only
 * KEYS[1] (the caller's key, which carries its own {hash tag}). claimNonce also reads and may
 * write the store's one epoch marker, so on a Redis Cluster it would need the nonce keys and the
 * marker in one slot; fxgate runs on one primary (REDIS_URL, or the one Sentinel names).
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

/** Lua that sets `epoch` to the marker at KEYS[n], making it now (server clock, ms) when missing; it never expires. */
const epochMarker = (n: number) => `
local epoch = redis.call('GET', KEYS[${n}])
if not epoch then
  local time = redis.call('TIME')
  epoch = string.format('%.0f', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
  redis.call('SET', KEYS[${n}], epoch)
end`;

/**
 * KEYS: the epoch marker, the identity of the primary that made it. ARGV: this primary's identity
 * (primary-identity.ts). Reply: the marker. A connection runs it before any other command: a
 * primary of another identity (a replica promoted by a failover, a server restarted) may lack
 * nonces the marker's primary held, so the marker is made again, now, and this primary's identity
 * recorded with it. Never earlier than the marker it replaces, whatever the new server's clock says.
 * A marker that is not a number is made again too: a new marker only refuses more tokens.
 */
const nonceEpochOfPrimary = `
local epoch = redis.call('GET', KEYS[1])
if not epoch or not string.match(epoch, '^%d+$') or redis.call('GET', KEYS[2]) ~= ARGV[1] then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local former = tonumber(epoch or '')
  if former and former > now then
    now = former
  end
  epoch = string.format('%.0f', now)
  redis.call('SET', KEYS[1], epoch)
  redis.call('SET', KEYS[2], ARGV[1])
end
return epoch
`;

/**
 * KEYS: the nonce key, the epoch marker. ARGV: ttlMs. Reply: {1 | 0 (fresh or claimed before),
 * the marker}. A missing marker (a new or emptied Redis) is made now: from then on every nonce
 * claimed is in this Redis.
 */
const claimNonce = `${epochMarker(2)}
if redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'NX') then
  return {1, epoch}
end
return {0, epoch}
`;

/** KEYS: the epoch marker. Reply: the marker, made now when missing (a new or emptied Redis). */
const nonceEpoch = `${epochMarker(1)}
return epoch
`;

export const REDIS_SCRIPTS = {
  idempotencyBegin,
  idempotencyComplete,
  idempotencyRelease,
  rateLimit,
  claimNonce,
  nonceEpoch,
  nonceEpochOfPrimary,
} as const;

export type RedisScriptName = keyof typeof REDIS_SCRIPTS;

/** How many of each script's arguments are keys (KEYS, prefixed by the client); the rest are ARGV. */
export const REDIS_SCRIPT_KEY_COUNTS: Readonly<Record<RedisScriptName, number>> = {
  idempotencyBegin: 1,
  idempotencyComplete: 1,
  idempotencyRelease: 1,
  rateLimit: 1,
  claimNonce: 2,
  nonceEpoch: 1,
  nonceEpochOfPrimary: 2,
};
