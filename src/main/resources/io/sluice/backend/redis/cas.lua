-- sluice: sets each domain's word to the one the instance worked out, if Redis still holds the
-- word it worked it out from. The limiting algorithms run in sluice (io.sluice.limit.Algorithm);
-- Redis only keeps their words, so every algorithm is shared the same way.
-- KEYS: one per domain
-- ARGV: for each domain, 3 values: the word expected ("0": none), the word to set, its ttl in ms
-- Returns, for each domain, 1 when set, else the word Redis holds ("0": none), to work from next.
local out = {}
for i = 1, #KEYS do
  local a = 3 * i - 2
  local current = redis.call('GET', KEYS[i]) or '0'
  if current == ARGV[a] then
    redis.call('SET', KEYS[i], ARGV[a + 1], 'PX', ARGV[a + 2])
    out[i] = 1
  else
    out[i] = current
  end
end
return out
