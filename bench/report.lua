-- Prints one machine-readable line at the end of a wrk run:
-- RESULT <requests/s> <p50 ms> <p99 ms> <requests> <non-2xx responses> <socket errors>
-- Each thread's `id` is its number (0, 1, ...), set before its init runs.
non2xx = 0
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do
    bad = bad + (t:get("non2xx") or 0)
  end
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout
  io.write(string.format("RESULT %.1f %.3f %.3f %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, bad, errors))
end
