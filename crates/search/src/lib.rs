//! The in-memory job index, with no I/O: compact sets of ordinals (`postings`, combined a
//! chunk at a time as `block`s) that a job list's words and filter values map to, and
//! one organization's jobs indexed with them (`index`), which answers a search or a
//! filtered list with its page and exact total.

#![forbid(unsafe_code)]

pub mod block;
pub mod index;
pub mod postings;

pub use block::{Block, block_and, block_count, block_is_empty, block_iter_desc};
pub use index::{Doc, Found, Names, OrgIndex, Query};
pub use postings::Postings;
