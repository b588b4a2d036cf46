-- The reading half of bench/soak.sh: what visitors and websites ask, one request per
-- connection at a time, each after SOAK_DELAY_MS milliseconds (0: as fast as the server
-- answers, for the capacity bench/soak.sh calibrates against). A mix of the API's list
-- and searches (the key comes from the command line's header), the board's home page and
-- its searches, the feed and the sitemap. The search words are bench/posting.lua's, as
-- the jobs posted by soak_writes.lua use them. Prints report.lua's RESULT line at the end.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")
dofile(os.getenv("BENCH_DIR") .. "/posting.lua")

local words = {}
local pause = tonumber(os.getenv("SOAK_DELAY_MS") or "0")

function init(args)
  load_words()
  for _, name in ipairs({"fields", "roles", "cities"}) do
    for _, w in ipairs(lists[name]) do table.insert(words, (w:gsub(" ", "+"))) end
  end
  math.randomseed(2000 + id)
end

function delay()
  return pause
end

function request()
  local r = math.random(100)
  local w = words[math.random(#words)]
  local path
  if r <= 35 then
    path = "/api/jobs?search=" .. w
  elseif r <= 50 then
    path = "/api/jobs?page=" .. math.random(1, 5)
  elseif r <= 70 then
    path = "/"
  elseif r <= 90 then
    path = "/?search=" .. w
  elseif r <= 95 then
    path = "/feed.xml"
  else
    path = "/sitemap.xml"
  end
  return wrk.format("GET", path)
end
