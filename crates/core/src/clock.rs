//! The service's clock: the system time, moved forward by an offset that tests advance, or
//! stopped at a chosen instant, so that time-dependent rules (session expiry, sign-in
//! limits, retry schedules) can be tested without waiting. Clones share one offset.

use std::{
    sync::{
        Arc,
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
}
