-- sluice, exact mode: decide n queries for each of several domains in one atomic step.
-- ARGV[1]: "f" (fixed window) or "s" (sliding window)
-- then for each domain, 4 values: n (queries waiting), limit, ttl in ms, share of the previous
--   window still inside the sliding window (ignored for fixed)
-- KEYS for each domain: the current window's key, and for "s" the previous window's key
-- Returns, for each domain, how many of its n queries are allowed; only those are counted.
local sliding = ARGV[1] == 's'
local out = {}
local k = 1
local a = 2
local i = 1
while a <= #ARGV do
  local n = tonumber(ARGV[a])
  local limit = tonumber(ARGV[a + 1])
  local ttl = ARGV[a + 2]
  local share = tonumber(ARGV[a + 3])
  a = a + 4
  local key = KEYS[k]
  local used = tonumber(redis.call('GET', key) or '0')
  if sliding then
    used = used + tonumber(redis.call('GET', KEYS[k + 1]) or '0') * share
    k = k + 2
  else
    k = k + 1
  end
  local allowed = math.max(0, math.min(n, math.ceil(limit - used)))
  if allowed > 0 then
    if redis.call('INCRBY', key, allowed) == allowed then
      redis.call('PEXPIRE', key, ttl)
    end
  end
  out[i] = allowed
  i = i + 1
end
return out
