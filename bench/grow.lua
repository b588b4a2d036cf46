-- Posts new jobs to POST /api/jobs until wrk is stopped (bench/grow.sh stops it with
-- SIGINT once the board holds the jobs it wants), each made by bench/posting.lua like
-- bench/seed.py's, so the search mix finds them. The key comes from the command line's
-- header. Prints report.lua's RESULT line at the end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")
dofile(os.getenv("BENCH_DIR") .. "/posting.lua")

local headers = {}

function init(args)
  load_words()
  math.randomseed(1000 + id)
  for k, v in pairs(wrk.headers) do headers[k] = v end
  headers["Content-Type"] = "application/json"
end

function request()
  return wrk.format("POST", "/api/jobs", headers, job_body())
end
