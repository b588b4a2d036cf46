-- Posts new jobs to POST /api/jobs until wrk is stopped (bench/grow.sh stops it with
-- SIGINT once the board holds the jobs it wants). Each job is made like bench/seed.py's
-- (a title from levels, fields and roles, one of about 400 companies, one of 30 cities,
-- one of 6 job types, a quarter remote, a description of 40 to 80 words) from the lists
-- of GROW_WORDS (bench/grow_words.py), so the search mix finds them. The key comes from
-- the command line's header. Prints report.lua's RESULT line at the end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")

local lists = {}
local headers = {}

local function pick(name)
  local l = lists[name]
  return l[math.random(#l)]
end

function init(args)
  for line in io.lines(os.getenv("GROW_WORDS")) do
    local name, words = line:match("^([^\t]+)\t(.*)$")
    local l = {}
    for w in words:gmatch("[^|]+") do table.insert(l, w) end
    lists[name] = l
  end
  math.randomseed(1000 + id)
  for k, v in pairs(wrk.headers) do headers[k] = v end
  headers["Content-Type"] = "application/json"
end

function request()
  local words = {}
  for n = 1, math.random(40, 80) do words[n] = pick("vocab") end
  local body = string.format(
    '{"title":"%s %s %s","company_name":"%s","location":"%s","job_type":"%s",' ..
    '"is_remote":%s,"status":"active","description":"<p>%s</p>"}',
    pick("levels"), pick("fields"), pick("roles"), pick("companies"), pick("cities"),
    pick("types"), math.random() < 0.25 and "true" or "false", table.concat(words, " "))
  return wrk.format("POST", "/api/jobs", headers, body)
end
