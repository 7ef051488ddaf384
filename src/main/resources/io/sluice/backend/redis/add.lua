-- sluice, async mode: add what one instance allowed locally, and read back the fleet's totals.
-- KEYS: for each domain, its current window's key
-- ARGV[1]: "f" (reserved for other layouts); then for each domain, 2 values: queries allowed by
--   this instance since its last sync, and the key's ttl in ms
-- Returns, for each domain, the window's total over all instances.
local out = {}
for i = 1, #KEYS do
  local delta = tonumber(ARGV[2 * i])
  local total
  if delta > 0 then
    total = redis.call('INCRBY', KEYS[i], delta)
    if total == delta then
      redis.call('PEXPIRE', KEYS[i], ARGV[2 * i + 1])
    end
  else
    total = tonumber(redis.call('GET', KEYS[i]) or '0')
  end
  out[i] = total
end
return out
