-- Sends the searches of SEARCH_MIX (one request path per line, bench/search_mix.py) to
-- many boards: each request carries the key of a board drawn from BOARDS_KEYS (one key
-- per line) with a skew: the board on line r is drawn in proportion to 1 / r^BOARDS_SKEW
-- (1.0 when unset: a few boards take much of the traffic, every board some). Paths are
-- split between wrk's threads as in bench/search_mix.lua (WRK_THREADS, from line
-- SEARCH_MIX_START). With BOARDS_IN_PATH set, the line drawn replaces `{org}` in the
-- path instead of being sent as the key (bench/datasette.sh: organization ids). Prints
-- report.lua's RESULT line at the end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")

local paths, keys, cdf = {}, {}, {}
local i, step = 0, 1

function init(args)
  for line in io.lines(os.getenv("SEARCH_MIX")) do table.insert(paths, line) end
  for line in io.lines(os.getenv("BOARDS_KEYS")) do table.insert(keys, line) end
  local skew = tonumber(os.getenv("BOARDS_SKEW")) or 1.0
  local sum = 0
  for r = 1, #keys do
    sum = sum + 1 / r ^ skew
    cdf[r] = sum
  end
  for r = 1, #keys do cdf[r] = cdf[r] / sum end
  i = (tonumber(os.getenv("SEARCH_MIX_START")) or 0) + (id or 0)
  step = tonumber(os.getenv("WRK_THREADS")) or 1
  math.randomseed(7 + (id or 0))
end

-- The line of the board drawn: the first whose cumulative share reaches a uniform draw.
local function board()
  local u, lo, hi = math.random(), 1, #cdf
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cdf[mid] < u then lo = mid + 1 else hi = mid end
  end
  return lo
end

local in_path = os.getenv("BOARDS_IN_PATH")

function request()
  local p = paths[(i % #paths) + 1]
  i = i + step
  if in_path then
    return wrk.format(nil, (p:gsub("{org}", keys[board()])))
  end
  return wrk.format(nil, p, { ["x-api-key"] = keys[board()], ["Cache-Control"] = "no-cache" })
end
