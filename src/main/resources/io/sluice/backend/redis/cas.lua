-- sluice: sets each domain's word to the one the instance worked out, if Redis still holds the
-- word it worked it out from. The limiting algorithms run in sluice (io.sluice.limit.Algorithm);
-- Redis only keeps their words, so every algorithm is shared the same way.
-- KEYS: one per domain
-- ARGV: for each domain, 4 values: the word expected ("0": none); "1" when that word no longer
--   changes a decision, so that a key already expired (none) matches it too, else "0"; the word
--   to set; its ttl in ms
-- Returns, for each domain, 1 when set, else the word Redis holds ("0": none), to work from next.
-- A value that is not a word as sluice writes them (Algorithm.isWord: a decimal integer in a
-- long's range, no sign but '-', no leading zero, and not negative with its low 24 bits all zero,
-- as Algorithm.REFUSE and CounterTable.DEAD are) is not sluice's: it counts as none, and is replaced.
local function isWord(s)
  if s == '0' then
    return true
  end
  local sign, digits = string.match(s, '^(%-?)([1-9]%d*)$')
  if not digits then
    return false
  end
  local max = sign == '-' and '9223372036854775808' or '9223372036854775807'
  if #digits > 19 or (#digits == 19 and digits > max) then
    return false
  end
  if sign == '' then
    return true
  end
  -- Lua's numbers are doubles: the remainder by 2^24, digit by digit, stays exact
  local r = 0
  for k = 1, #digits do
    r = (r * 10 + string.byte(digits, k) - 48) % 16777216
  end
  return r ~= 0
end

local out = {}
for i = 1, #KEYS do
  local a = 4 * i - 3
  local current = redis.call('GET', KEYS[i]) or '0'
  if current ~= ARGV[a] and not isWord(current) then
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
