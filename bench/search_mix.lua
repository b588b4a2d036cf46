-- Sends the searches of the file named by SEARCH_MIX (one request path per line, from
-- bench/search_mix.py) in order, each once per pass, from line SEARCH_MIX_START (0 when
-- unset): thread i of n sends lines start+i, start+i+n, ... and starts over after the last.
-- Prints report.lua's RESULT line at the end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")

local paths = {}
local i = 0
local step = 1

function init(args)
  for line in io.lines(os.getenv("SEARCH_MIX")) do
    table.insert(paths, line)
  end
  i = (tonumber(os.getenv("SEARCH_MIX_START")) or 0) + (id or 0)
  -- A thread's init runs before the next thread's setup: the count comes from the
  -- environment (WRK_THREADS, the -t given to wrk).
  step = tonumber(os.getenv("WRK_THREADS")) or 1
end

function request()
  local p = paths[(i % #paths) + 1]
  i = i + step
  return wrk.format(nil, p)
end
