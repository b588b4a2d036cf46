-- The writing half of bench/soak.sh: what an applicant tracking system, applicants and the
-- board's visitors send. Run with one connection per thread (-tN -cN): each connection
-- goes round posting a job (bench/posting.lua's, with a contact address, so mails go
-- out), an application to it, a view of it (analytics), and, once it has posted
-- SOAK_KEEP jobs, deleting its oldest, so the board stays the same size while it is
-- written. Each request waits SOAK_DELAY_MS milliseconds. bench/soak.sh runs it once a
-- minute: each connection keeps the jobs it posted and deleted in SOAK_STATE.<thread>
-- ("+id" and "-id" lines), so the next minute goes on where it stopped. Prints
-- report.lua's RESULT line.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")
dofile(os.getenv("BENCH_DIR") .. "/posting.lua")

local pause = tonumber(os.getenv("SOAK_DELAY_MS") or "0")
local keep = tonumber(os.getenv("SOAK_KEEP") or "500")
local posted = {}
local first, last = 1, 0
local step = 0
local visitor = 0

local state

-- Replays the connection's log: the jobs it posted and has not deleted, oldest first.
local function restore()
  local file = os.getenv("SOAK_STATE") .. "." .. id
  local gone = {}
  local lines = {}
  local f = io.open(file, "r")
  if f then
    for line in f:lines() do
      table.insert(lines, line)
      if line:sub(1, 1) == "-" then gone[line:sub(2)] = true end
    end
    f:close()
  end
  for _, line in ipairs(lines) do
    local job = line:sub(2)
    if line:sub(1, 1) == "+" and not gone[job] then
      last = last + 1
      posted[last] = job
    end
  end
  state = io.open(file, "a")
end

local function record(line)
  state:write(line, "\n")
  state:flush()
end

function init(args)
  restore()
  start_posting(3000)
end

function delay()
  return pause
end

local function newest()
  return posted[last]
end

function request()
  step = step % 4 + 1
  if step == 1 or not newest() then
    step = 1
    local body = job_body('"contact_email":"hr@acme.example",')
    return wrk.format("POST", "/api/jobs", json_headers, body)
  elseif step == 2 then
    local body = '{"name":"Ada Applicant","email":"ada@applicant.example","cover_letter":"Hello"}'
    return wrk.format("POST", "/api/jobs/" .. newest() .. "/applications", json_headers, body)
  elseif step == 3 then
    visitor = visitor + 1
    local body = string.format(
      '{"events":[{"type":"job_view","job_id":"%s","visitor_id":"v%d-%d"}]}',
      newest(), id, visitor % 5000)
    return wrk.format("POST", "/api/analytics/events", json_headers, body)
  elseif last - first + 1 > keep then
    local gone = posted[first]
    posted[first] = nil
    first = first + 1
    record("-" .. gone)
    return wrk.format("DELETE", "/api/jobs/" .. gone, json_headers)
  else
    return wrk.format("GET", "/api/jobs/" .. newest(), json_headers)
  end
end

local report_response = response
function response(status, hdrs, body)
  report_response(status, hdrs, body)
  if step == 1 and status == 201 then
    local got = body:match('"id":"([0-9a-f%-]+)"')
    if got then
      last = last + 1
      posted[last] = got
      record("+" .. got)
    end
  end
end
