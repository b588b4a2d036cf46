-- POST /api/jobs with a distinct body per request (same reporting as report.lua).
dofile(os.getenv("BENCH_DIR") .. "/report.lua")

local counter = 0
local thread_id = 0
local roles = {"Engineer", "Designer", "Nurse", "Chef", "Analyst", "Driver"}

function init(args)
  thread_id = math.random(1, 1000000)
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"title":"Bench %s %d-%d","description":"<p>Posted by the <b>benchmark</b> run %d.</p>",' ..
    '"company_name":"Bench Co","job_type":"full-time","location":"Berlin","status":"active"}',
    roles[counter % #roles + 1], thread_id, counter, counter)
  -- Headers given here replace those of the command line: repeat the key.
  local headers = {}
  for k, v in pairs(wrk.headers) do headers[k] = v end
  headers["Content-Type"] = "application/json"
  return wrk.format("POST", nil, headers, body)
end
