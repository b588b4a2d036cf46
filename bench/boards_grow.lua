-- Posts new jobs to POST /api/jobs for the boards of BOARDS_KEYS (one key per line) in
-- turn, until wrk is stopped (bench/boards.sh stops it with SIGINT once the boards hold
-- the jobs it wants): thread t of WRK_THREADS posts to the boards on lines t+1, t+1+n,
-- ..., so the boards grow together. Each job is made by bench/posting.lua like
-- bench/seed.py's, so the search mix finds them. Prints report.lua's RESULT line at the
-- end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")
dofile(os.getenv("BENCH_DIR") .. "/posting.lua")

local keys = {}
local i, step = 0, 1

function init(args)
  start_posting(2000)
  for line in io.lines(os.getenv("BOARDS_KEYS")) do table.insert(keys, line) end
  i = id or 0
  step = tonumber(os.getenv("WRK_THREADS")) or 1
end

function request()
  json_headers["x-api-key"] = keys[(i % #keys) + 1]
  i = i + step
  return wrk.format("POST", "/api/jobs", json_headers, job_body())
end
