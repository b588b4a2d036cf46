-- Posts new jobs to POST /api/jobs until wrk is stopped (bench/grow.sh stops it with
-- SIGINT once the board holds the jobs it wants), each made by bench/posting.lua like
-- bench/seed.py's, so the search mix finds them. The key comes from the command line's
-- header. Prints report.lua's RESULT line at the end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")
dofile(os.getenv("BENCH_DIR") .. "/posting.lua")

function init(args)
  start_posting(1000)
end

function request()
  return wrk.format("POST", "/api/jobs", json_headers, job_body())
end
