-- sluice: sets each domain's word to the one the instance worked out, if Redis still holds the
-- word it worked it out from. The limiting algorithms run in sluice (io.sluice.limit.Algorithm);
-- Redis only keeps their words, so every algorithm is shared the same way.
-- KEYS: one per domain
-- ARGV: for each domain, 4 values: the word expected ("0": none); "1" when that word no longer
--   changes a decision, so that a key already expired (none) matches it too, else "0"; the word
--   to set; its ttl in ms
-- Returns, for each domain, 1 when set, else the word Redis holds ("0": none), to work from next.
-- A value not written as sluice writes words (a decimal integer, no sign but '-', no leading
-- zero), or one of the two values no algorithm stores (Algorithm.REFUSE, Counter.DEAD), is not
-- sluice's: it counts as none, and is replaced.
local out = {}
for i = 1, #KEYS do
  local a = 4 * i - 3
  local current = redis.call('GET', KEYS[i]) or '0'
  if current ~= ARGV[a] and current ~= '0' and (not string.match(current, '^%-?[1-9]%d*$')
      or current == '-9223372036854775808' or current == '-9223372032559808512') then
    current = '0' -- checked only when not the word expected, which sluice wrote
  end
  if current == ARGV[a] or (current == '0' and ARGV[a + 1] == '1') then
    redis.call('SET', KEYS[i], ARGV[a + 2], 'PX', ARGV[a + 3])
    out[i] = 1
  else
    out[i] = current
  end
end
return out
