//! Exact rate limiting with GCRA (the generic cell rate algorithm).
//!
//! A bucket of `limit` requests per `window` keeps one number, its theoretical arrival time
//! (TAT). A request at `now` is allowed when `max(tat, now) + T - now <= window`, with
//! `T = window / limit`; then TAT moves to `max(tat, now) + T`. This admits exactly `limit`
//! requests in a burst and then one per `T`. On SQLite (one node) the state lives in
//! memory; on PostgreSQL it lives in the shared database and is updated by one atomic
//! statement, so the limit is exact across nodes and under concurrency. One statement may
//! take several requests at once ([`take_sql`]): `n` requests arriving together are
//! decided as `n` requests at the same instant, one after the other ([`share`]).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use sqlx::PgPool;

/// The largest configurable limit per window.
pub const MAX_LIMIT: u32 = 100_000;

/// The window every limit counts over.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Unix seconds at which the bucket is full again.
    pub reset_unix: u64,
    /// Seconds until the next request would be allowed (0 when allowed).
    pub retry_after_secs: u64,
}

const NANOS: i128 = 1_000_000_000;

fn interval_ns(limit: u32) -> i64 {
    (WINDOW.as_nanos() as i64) / i64::from(limit.max(1))
}

/// Computes the new TAT and the decision (pure, shared by both stores).
pub fn gcra(tat: i64, now: i64, limit: u32) -> (i64, Decision) {
    let t = interval_ns(limit);
    let window = WINDOW.as_nanos() as i64;
    let start = tat.max(now);
    let allowed = start + t - now <= window;
    let new_tat = if allowed { start + t } else { tat.max(now) };
    decide(new_tat, now, limit, allowed)
}

/// Builds the decision from the TAT after the request.
fn decide(tat: i64, now: i64, limit: u32, allowed: bool) -> (i64, Decision) {
    let t = interval_ns(limit);
    let window = WINDOW.as_nanos() as i64;
    let used = (tat - now).max(0);
    let remaining = ((window - used).max(0) / t) as u32;
    let reset_unix = ceil_secs(i128::from(tat.max(now)));
    let retry_after_secs = if allowed {
        0
    } else {
        // The next request fits once `tat + t - window <= now`.
        let wait = i128::from(tat) + i128::from(t) - i128::from(window) - i128::from(now);
        ceil_secs(wait.max(0)).max(1)
    };
    (
        tat,
        Decision {
            allowed,
            limit,
            remaining: remaining.min(limit),
            reset_unix,
            retry_after_secs,
        },
    )
}

/// The decision of the request at `place` (`0..`) of a group that one statement decided
/// together: `taken` of the group were admitted, leaving the bucket at `tat`; `now` is the
/// instant of the statement. The same decisions as the group's requests checked one by
/// one at `now`.
pub fn share(tat: i64, taken: u32, now: i64, limit: u32, place: usize) -> Decision {
    let t = interval_ns(limit);
    if (place as u64) < u64::from(taken) {
        let start = tat - t * i64::from(taken);
        decide(start + t * (place as i64 + 1), now, limit, true).1
    } else {
        decide(tat, now, limit, false).1
    }
}

/// The common table expression `clock(now)` of the statements that take requests (see
/// [`take_sql`]): the database's clock, the one all nodes share, in nanoseconds, read once
/// per statement.
pub const CLOCK_SQL: &str = "clock AS MATERIALIZED (SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000000)::BIGINT AS now)";

/// The statement part that takes up to `{n}` requests from one bucket at once (PostgreSQL).
/// It reads `clock(now)` and `p(bucket, t)` (`t`: the interval of the bucket's limit) from
/// the statement's common table expressions and returns the bucket's new `tat` and how
/// many of the requests it admitted (`taken`); `{window}` is [`WINDOW`] in nanoseconds.
/// The row lock of the upsert serialises concurrent statements of a bucket, and the
/// database clock is the one clock all nodes share.
pub fn take_sql(n: &str, window: &str) -> String {
    let now = "(SELECT now FROM clock)";
    let t = "(SELECT t FROM p)";
    let fits = format!("GREATEST(0, {window} - (GREATEST(r.tat, {now}) - {now})) / {t}");
    format!(
        "INSERT INTO rate_limits AS r (bucket, tat, allowed, taken)
         SELECT p.bucket, clock.now + p.t * LEAST({n}, {window} / p.t), TRUE, LEAST({n}, {window} / p.t)
         FROM p, clock
         ON CONFLICT (bucket) DO UPDATE SET
           taken = LEAST({n}, {fits}),
           tat = GREATEST(r.tat, {now}) + {t} * LEAST({n}, {fits})
         RETURNING r.tat, r.taken"
    )
}

fn ceil_secs(ns: i128) -> u64 {
    ((ns + NANOS - 1) / NANOS).max(0) as u64
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Where bucket state lives.
pub enum RateLimiter {
    Memory(Mutex<HashMap<String, i64>>),
    Postgres(PgPool),
}

impl RateLimiter {
    pub fn memory() -> RateLimiter {
        RateLimiter::Memory(Mutex::new(HashMap::new()))
    }

    /// Takes one request from `bucket` (limit per minute).
    pub async fn check(&self, bucket: &str, limit: u32) -> Result<Decision, sqlx::Error> {
        match self {
            RateLimiter::Memory(map) => {
                let now = now_ns();
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                let tat = map.get(bucket).copied().unwrap_or(now);
                let (new_tat, d) = gcra(tat, now, limit);
                map.insert(bucket.to_string(), new_tat);
                Ok(d)
            }
            RateLimiter::Postgres(pool) => {
                static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
                    format!(
                        "WITH {CLOCK_SQL}, p AS (SELECT $1::TEXT AS bucket, $2::BIGINT AS t),
                         take AS ({})
                         SELECT take.tat, take.taken, clock.now FROM take, clock",
                        take_sql("1", "$3::BIGINT")
                    )
                });
                let (tat, taken, now): (i64, i32, i64) =
                    sqlx::query_as(sqlx::AssertSqlSafe(SQL.as_str()))
                        .bind(bucket)
                        .bind(interval_ns(limit))
                        .bind(WINDOW.as_nanos() as i64)
                        .fetch_one(pool)
                        .await?;
                Ok(share(tat, taken.max(0) as u32, now, limit, 0))
            }
        }
    }

    /// Forgets buckets that are full again (they hold no information).
    pub async fn prune(&self) -> Result<u64, sqlx::Error> {
        match self {
            RateLimiter::Memory(map) => {
                let now = now_ns();
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                let before = map.len();
                map.retain(|_, tat| *tat > now);
                Ok((before - map.len()) as u64)
            }
            RateLimiter::Postgres(pool) => {
                let r = sqlx::query(
                    "DELETE FROM rate_limits WHERE tat < (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000000)::BIGINT",
                )
                .execute(pool)
                .await?;
                Ok(r.rows_affected())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(limit: u32, times: &[i64]) -> Vec<Decision> {
        let mut tat = times[0];
        times
            .iter()
            .map(|&now| {
                let (t, d) = gcra(tat, now, limit);
                tat = t;
                d
            })
            .collect()
    }

    #[test]
    fn admits_exactly_the_limit_in_a_burst() {
        for limit in [1, 7, 30, 100, 1000, MAX_LIMIT] {
            let now = 1_000 * NANOS as i64;
            let ds = run(limit, &vec![now; limit as usize + 1]);
            assert!(
                ds[..limit as usize].iter().all(|d| d.allowed),
                "limit {limit}"
            );
            assert!(!ds[limit as usize].allowed, "limit {limit}");
            assert_eq!(ds[limit as usize - 1].remaining, 0);
            assert_eq!(ds[0].remaining, limit - 1);
        }
    }

    #[test]
    fn refills_one_per_interval_and_reports_retry_after() {
        let start = 5_000 * NANOS as i64;
        let mut times = vec![start; 101];
        let ds = run(100, &times);
        let last = ds[100];
        assert!(!last.allowed);
        assert_eq!(last.retry_after_secs, 1); // one request per 0.6 s
        // 0.6 s later one more fits, and only one.
        times = vec![start; 100];
        times.push(start + 600_000_000);
        times.push(start + 600_000_000);
        let ds = run(100, &times);
        assert!(ds[100].allowed);
        assert!(!ds[101].allowed);
        // A full window later the bucket is full again.
        assert_eq!(ds[99].reset_unix, 5_060);
    }

    #[test]
    fn a_group_decided_at_once_matches_its_requests_one_by_one() {
        for limit in [1, 3, 100] {
            for used in [0, 1, limit - 1, limit] {
                for n in [1usize, 2, 5, 150] {
                    let now = 9_000 * NANOS as i64;
                    // The bucket after `used` requests at `now`.
                    let mut tat = now;
                    for _ in 0..used {
                        tat = gcra(tat, now, limit).0;
                    }
                    let before = tat;
                    let one_by_one: Vec<Decision> = (0..n)
                        .map(|_| {
                            let (t, d) = gcra(tat, now, limit);
                            tat = t;
                            d
                        })
                        .collect();
                    // The statement's arithmetic: how many fit, and the bucket after them.
                    let t = interval_ns(limit);
                    let window = WINDOW.as_nanos() as i64;
                    let fits = (window - (before.max(now) - now)).max(0) / t;
                    let taken = fits.min(n as i64);
                    let after = before.max(now) + t * taken;
                    assert_eq!(after, tat, "limit {limit} used {used} n {n}");
                    let grouped: Vec<Decision> = (0..n)
                        .map(|place| share(after, taken as u32, now, limit, place))
                        .collect();
                    assert_eq!(grouped, one_by_one, "limit {limit} used {used} n {n}");
                }
            }
        }
    }

    #[tokio::test]
    async fn memory_limiter_counts_per_bucket() {
        let l = RateLimiter::memory();
        for _ in 0..3 {
            assert!(l.check("a", 3).await.unwrap().allowed);
        }
        assert!(!l.check("a", 3).await.unwrap().allowed);
        assert!(l.check("b", 3).await.unwrap().allowed);
    }
}
