//! The service's clock: the system time, moved forward by an offset that tests advance, or
//! stopped at a chosen instant, so that time-dependent rules (session expiry, sign-in
//! limits, retry schedules) can be tested without waiting. Clones share one offset.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use crate::values::Ts;

/// The system time plus an offset (zero outside tests), or a fixed instant.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_micros: Arc<AtomicI64>,
    fixed: Option<Ts>,
}

impl Clock {
    /// The system time.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// A clock that stays at `t` (tests: "what is due at noon tomorrow").
    pub fn at(t: Ts) -> Clock {
        Clock {
            fixed: Some(t),
            ..Clock::default()
        }
    }

    /// The current time.
    pub fn now(&self) -> Ts {
        let base = self.fixed.unwrap_or_else(Ts::now);
        Ts::from_micros(base.micros() + self.offset_micros.load(Ordering::Relaxed))
    }

    /// Moves this clock, and every clone of it, forward by `by` (tests: "eight hours
    /// later").
    pub fn advance(&self, by: Duration) {
        let micros = i64::try_from(by.as_micros()).unwrap_or(i64::MAX);
        self.offset_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

/// When each of a service's occasional steps last ran, so that a loop that wakes every
/// second runs them only every so often, by the service's clock. Each service keeps its
/// own: several services in one process (tests) do not hold each other's steps back.
#[derive(Debug, Default)]
pub struct Cadence {
    last: Mutex<HashMap<&'static str, Ts>>,
}

impl Cadence {
    /// True, and noted as run at `now`, when `step` has not run in the `every` before
    /// `now` (the first time: true).
    pub fn due(&self, step: &'static str, now: Ts, every: Duration) -> bool {
        let every = i64::try_from(every.as_micros()).unwrap_or(i64::MAX);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.get(step) {
            Some(t) if now.micros().saturating_sub(t.micros()) < every => false,
            _ => {
                last.insert(step, now);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_every_clone() {
        let c = Clock::default();
        let other = c.clone();
        let before = c.now();
        c.advance(Duration::from_secs(3600));
        assert!(other.now().micros() - before.micros() >= 3_600_000_000);
    }

    #[test]
    fn a_fixed_clock_stays() {
        let t = Ts::parse("2030-01-01T00:00:00Z").unwrap();
        let c = Clock::at(t);
        assert_eq!(c.now(), t);
        c.advance(Duration::from_secs(60));
        assert_eq!(c.now(), t.later_by(Duration::from_secs(60)));
    }

    #[test]
    fn a_step_is_due_once_per_period() {
        let t = Ts::parse("2030-01-01T00:00:00Z").unwrap();
        let hour = Duration::from_secs(3600);
        let c = Cadence::default();
        assert!(c.due("prune", t, hour), "the first time");
        assert!(!c.due("prune", t.later_by(Duration::from_secs(3599)), hour));
        assert!(c.due("other", t, hour), "each step has its own");
        assert!(c.due("prune", t.later_by(hour), hour));
        assert!(!c.due("prune", t.later_by(hour), hour));
        assert!(
            Cadence::default().due("prune", t, hour),
            "each service has its own"
        );
    }
}
