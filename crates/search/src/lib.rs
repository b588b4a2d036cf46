//! The search structures of the in-memory job index, with no I/O: compact sets of
//! ordinals (`postings`) that a job list's words and filter values map to.

#![forbid(unsafe_code)]

pub mod postings;

pub use postings::{Block, Postings, block_and, block_count, block_is_empty, block_iter_desc};
