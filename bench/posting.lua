-- What the scripts that post jobs share: the word lists of bench/grow_words.py (the file
-- GROW_WORDS names) and the body of a job like bench/seed.py's (a title from levels,
-- fields and roles, one of about 400 companies, one of 30 cities, one of 6 job types, a
-- quarter remote, a description of 40 to 80 words). Loaded with dofile; init() calls
-- load_words() once per thread, or start_posting() in a script that posts.
lists = {}
-- The command line's headers (the key) with the JSON content type (start_posting).
json_headers = {}

function load_words()
  for line in io.lines(os.getenv("GROW_WORDS")) do
    local name, words = line:match("^([^\t]+)\t(.*)$")
    local l = {}
    for w in words:gmatch("[^|]+") do table.insert(l, w) end
    lists[name] = l
  end
end

-- A posting thread's start: the word lists, its own random sequence (`seed` plus the
-- thread's id), and json_headers.
function start_posting(seed)
  load_words()
  math.randomseed(seed + id)
  for k, v in pairs(wrk.headers) do json_headers[k] = v end
  json_headers["Content-Type"] = "application/json"
end

function pick(name)
  local l = lists[name]
  return l[math.random(#l)]
end

-- The JSON body of a new active job; `extra` (JSON members, e.g. '"contact_email":"x",')
-- is added as it is.
function job_body(extra)
  local words = {}
  for n = 1, math.random(40, 80) do words[n] = pick("vocab") end
  return string.format(
    '{"title":"%s %s %s","company_name":"%s","location":"%s","job_type":"%s",' ..
    '"is_remote":%s,"status":"active",%s"description":"<p>%s</p>"}',
    pick("levels"), pick("fields"), pick("roles"), pick("companies"), pick("cities"),
    pick("types"), math.random() < 0.25 and "true" or "false", extra or "",
    table.concat(words, " "))
end
