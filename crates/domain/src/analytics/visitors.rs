//! When distinct visitors are counted and when they are estimated.
//!
//! Distinct visitors over a window are counted exactly from the (day, visitor) rows while
//! those are at most [`EXACT_VISITOR_ROWS`], and estimated from the merged daily sketches
//! beyond (where the days average at least [`SKETCH_WORTHWHILE`] visitors). An estimate is
//! kept within what the daily counts prove.

use super::hll::Sketch;

/// Above this many (day, visitor) rows in a range, distinct visitors are estimated from
/// the daily sketches instead of counted from the rows (if [`SKETCH_WORTHWHILE`] holds).
/// Counting this many rows exactly costs about as much as merging a year of daily sketches.
pub const EXACT_VISITOR_ROWS: i64 = 20_000;

/// Sketches are merged only where the daily rows hold at least this many visitors on
/// average: with fewer, reading and decoding one sketch per day costs more than counting
/// the few visitor rows it stands for.
pub const SKETCH_WORTHWHILE: i64 = 8;

/// The daily distinct visitors of one job (or the site) over a range: their sum (the
/// number of (day, visitor) rows), the largest (a lower bound of the distinct visitors),
/// and the number of daily rows.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DailyVisitors {
    pub rows: i64,
    pub max: i64,
    pub days: i64,
}

impl DailyVisitors {
    /// Adds another daily row (or the figures of another job).
    pub fn add(&mut self, other: DailyVisitors) {
        self.rows += other.rows;
        self.max = self.max.max(other.max);
        self.days += other.days;
    }

    /// True when distinct visitors over these rows are estimated rather than counted.
    pub fn estimated(&self) -> bool {
        self.rows > EXACT_VISITOR_ROWS && self.rows >= SKETCH_WORTHWHILE * self.days
    }

    /// The estimate of `sketch`, kept within what the daily counts prove: at least the
    /// busiest day, at most every day's visitors added up.
    pub fn clamp(self, sketch: &Sketch) -> i64 {
        (sketch.estimate().round() as i64).clamp(self.max, self.rows.max(self.max))
    }
}
