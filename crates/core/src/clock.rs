//! The wall clock of the dashboard's sessions, sign-in limits, setup links and form
//! tokens. It reads the system time, moved forward by an offset that tests advance, so
//! that idle and absolute expiry can be tested without waiting.

use std::{
    sync::atomic::{AtomicI64, Ordering},
    time::Duration,
};

use crate::values::Ts;

/// The system time plus an offset (zero outside tests).
#[derive(Debug, Default)]
pub struct Clock {
    offset_micros: AtomicI64,
}

impl Clock {
    /// The current time.
    pub fn now(&self) -> Ts {
        Ts::from_micros(Ts::now().micros() + self.offset_micros.load(Ordering::Relaxed))
    }

    /// Moves this clock forward by `by` (tests: "eight hours later").
    pub fn advance(&self, by: Duration) {
        let micros = i64::try_from(by.as_micros()).unwrap_or(i64::MAX);
        self.offset_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances() {
        let c = Clock::default();
        let before = c.now();
        c.advance(Duration::from_secs(3600));
        let after = c.now();
        assert!(after.micros() - before.micros() >= 3_600_000_000);
    }
}
