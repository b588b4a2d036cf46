//! Request metrics in the Prometheus text format: counts by route, method and status, and
//! a latency histogram by route. Lookups by route do not allocate once a route is known.
//!
//! Every request is counted, so the counts are kept in shards, one per worker thread (up
//! to [`SHARDS`]): threads counting at the same moment take locks of their own instead of
//! waiting on one (a contended lock put the threads to sleep and woke them through the
//! kernel, at tens of thousands of requests a second). `/metrics` adds the shards up.

use std::{collections::HashMap, fmt::Write, sync::Mutex, time::Duration};

const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Default, Clone)]
struct RouteStats {
    counts: HashMap<(String, u16), u64>,
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl RouteStats {
    fn add(&mut self, other: &RouteStats) {
        for (k, n) in &other.counts {
            *self.counts.entry(k.clone()).or_default() += n;
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(other.buckets) {
            *mine += theirs;
        }
        self.sum += other.sum;
        self.count += other.count;
    }
}

/// Shards of the request counts: more than the worker threads of a usual node, so that
/// each thread has one of its own.
const SHARDS: usize = 16;

/// One shard, on a cache line of its own (threads counting in neighbouring shards do not
/// take each other's line).
#[derive(Default)]
#[repr(align(128))]
struct Shard(Mutex<HashMap<String, RouteStats>>);

/// The shard of the calling thread: threads take shards in turn as they first count.
fn my_shard() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

/// What the memory allocator of the process reports: bytes the program has allocated and
/// not freed, and bytes of memory the allocator keeps resident for them (its own pages,
/// free ones not yet given back included).
#[derive(Debug, Clone, Copy)]
pub struct AllocatorStats {
    pub allocated: u64,
    pub resident: u64,
}

static ALLOCATOR_STATS: std::sync::OnceLock<fn() -> Option<AllocatorStats>> =
    std::sync::OnceLock::new();

/// Declares how to read the allocator's figures (the binary that chose the allocator does,
/// once, at start); without it `/metrics` has none.
pub fn set_allocator_stats(read: fn() -> Option<AllocatorStats>) {
    let _ = ALLOCATOR_STATS.set(read);
}

/// The allocator's figures, when the binary declared how to read them.
pub fn allocator_stats() -> Option<AllocatorStats> {
    ALLOCATOR_STATS.get().and_then(|read| read())
}

#[derive(Default)]
pub struct Metrics {
    shards: [Shard; SHARDS],
    /// Rows this node deleted because they had served their time.
    pub retention: Retention,
}

/// What retention deletes, as `/metrics` labels it (`records`).
pub const RETAINED: [&str; 6] = [
    "applications",
    "sign_in",
    "unconfirmed_alerts",
    "delivery_log",
    "search_notices",
    "audit_log",
];

/// Rows deleted by retention since the node started, by [`RETAINED`] kind.
#[derive(Default)]
pub struct Retention([std::sync::atomic::AtomicU64; RETAINED.len()]);

impl Retention {
    /// The counter of `records` (one of [`RETAINED`]).
    fn counter(&self, records: &str) -> &std::sync::atomic::AtomicU64 {
        let i = RETAINED
            .iter()
            .position(|k| *k == records)
            .expect("a kind of RETAINED");
        &self.0[i]
    }

    /// Counts `n` rows of `records` deleted.
    pub fn add(&self, records: &str, n: u64) {
        self.counter(records)
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// Rows of `records` deleted so far.
    pub fn get(&self, records: &str) -> u64 {
        self.counter(records)
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Metrics {
    pub fn observe(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        let mut routes = self.shards[my_shard()]
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let stats = match routes.get_mut(route) {
            Some(s) => s,
            None => routes.entry(route.to_string()).or_default(),
        };
        match stats
            .counts
            .iter_mut()
            .find(|((m, s), _)| m == method && *s == status)
        {
            Some((_, n)) => *n += 1,
            None => {
                stats.counts.insert((method.to_string(), status), 1);
            }
        }
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                stats.buckets[i] += 1;
            }
        }
        stats.sum += secs;
        stats.count += 1;
    }

    /// Renders every series, followed by `gauges` (name, help, value).
    pub fn render(&self, gauges: &[(&str, &str, f64)]) -> String {
        let mut routes: HashMap<String, RouteStats> = HashMap::new();
        for shard in &self.shards {
            let shard = shard.0.lock().unwrap_or_else(|e| e.into_inner());
            for (name, stats) in shard.iter() {
                match routes.get_mut(name) {
                    Some(sum) => sum.add(stats),
                    None => {
                        routes.insert(name.clone(), stats.clone());
                    }
                }
            }
        }
        let mut names: Vec<&String> = routes.keys().collect();
        names.sort();
        let mut out = String::new();
        out.push_str(
            "# HELP jobboard_http_requests_total HTTP requests by route, method and status.\n",
        );
        out.push_str("# TYPE jobboard_http_requests_total counter\n");
        for name in &names {
            let mut counts: Vec<_> = routes[*name].counts.iter().collect();
            counts.sort();
            for ((method, status), n) in counts {
                let _ = writeln!(
                    out,
                    "jobboard_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                    escape(name),
                    escape(method)
                );
            }
        }
        out.push_str("# HELP jobboard_http_request_duration_seconds Request latency by route.\n");
        out.push_str("# TYPE jobboard_http_request_duration_seconds histogram\n");
        for name in &names {
            let s = &routes[*name];
            let route = escape(name);
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "jobboard_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {}",
                    s.buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "jobboard_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                s.count
            );
            let _ = writeln!(
                out,
                "jobboard_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                s.sum
            );
            let _ = writeln!(
                out,
                "jobboard_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                s.count
            );
        }
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_histogram() {
        let m = Metrics::default();
        m.observe("/api/jobs", "GET", 200, Duration::from_millis(3));
        m.observe("/api/jobs", "GET", 200, Duration::from_millis(30));
        m.observe("/api/jobs", "POST", 422, Duration::from_millis(1));
        let text = m.render(&[("jobboard_outbox_pending", "Events waiting.", 4.0)]);
        assert!(text.contains(
            "jobboard_http_requests_total{route=\"/api/jobs\",method=\"GET\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "jobboard_http_requests_total{route=\"/api/jobs\",method=\"POST\",status=\"422\"} 1"
        ));
        assert!(text.contains(
            "jobboard_http_request_duration_seconds_bucket{route=\"/api/jobs\",le=\"0.005\"} 2"
        ));
        assert!(
            text.contains("jobboard_http_request_duration_seconds_count{route=\"/api/jobs\"} 3")
        );
        assert!(text.contains("jobboard_outbox_pending 4"));
    }

    #[test]
    fn threads_count_in_shards_that_add_up() {
        let m = std::sync::Arc::new(Metrics::default());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..250 {
                        m.observe("/healthz", "GET", 200, Duration::from_micros(100));
                    }
                    m.observe("/healthz", "HEAD", 200, Duration::from_secs(3));
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let text = m.render(&[]);
        assert!(text.contains(
            "jobboard_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1000\n"
        ));
        assert!(text.contains(
            "jobboard_http_requests_total{route=\"/healthz\",method=\"HEAD\",status=\"200\"} 4\n"
        ));
        assert!(text.contains(
            "jobboard_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"0.0005\"} 1000\n"
        ));
        assert!(text.contains(
            "jobboard_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"5\"} 1004\n"
        ));
        assert!(
            text.contains(
                "jobboard_http_request_duration_seconds_count{route=\"/healthz\"} 1004\n"
            )
        );
        assert_eq!(text.matches("route=\"/healthz\",le=\"+Inf\"").count(), 1);
    }
}
