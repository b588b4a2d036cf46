//! The indexes' memory budget: which indexes make room for a new one or for one that
//! grew, and what each index holds, counted as it is measured.

use std::sync::{Arc, atomic::Ordering};

use super::{Indexes, Live, Slot};
use crate::OrgId;

#[cfg(test)]
mod tests;

/// What [`Indexes::make_room`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// The new index is kept (other indexes dropped if needed).
    Kept,
    /// Making room would drop an index used more than the new one's organization: the new
    /// one is not kept.
    NotNow,
    /// Larger than the whole budget.
    TooLarge,
}

impl Indexes {
    /// Makes room for `need` bytes of the organization's new index by dropping indexes
    /// of other organizations ([`victims`]); with `always`, whatever their use.
    pub(super) fn make_room(&self, org_id: OrgId, need: usize, always: bool) -> Room {
        if need > self.budget {
            return Room::TooLarge;
        }
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let uses = slots
            .get(&org_id)
            .map_or(0, |s| s.uses.load(Ordering::Relaxed));
        let (others, lives): (Vec<Held>, Vec<&Arc<Slot>>) = slots
            .iter()
            .filter(|(id, _)| **id != org_id)
            .filter_map(|(_, s)| {
                s.live().map(|l| {
                    let held = Held {
                        uses: s.uses.load(Ordering::Relaxed),
                        used: s.used.load(Ordering::Relaxed),
                        bytes: l.bytes.load(Ordering::Relaxed),
                    };
                    (held, s)
                })
            })
            .unzip();
        let Some(drop) = victims(&others, need, self.budget, (!always).then_some(uses)) else {
            return Room::NotNow;
        };
        for i in drop {
            *lives[i].ready.write().unwrap_or_else(|e| e.into_inner()) = None;
        }
        Room::Kept
    }

    /// After the organization's index `live` (in `slot`) applied changes: when the
    /// indexes together hold more than the budget, makes room for it as for a new one of
    /// its size, or, when that would drop an index used more than it (or it alone is past
    /// the budget), drops it from its slot: its board's next list builds it again (as a
    /// first list does: at once for a small board, in the background for a large one,
    /// SQL answering meanwhile), unless it alone is past the budget. Nothing but one load
    /// while the indexes fit.
    pub(super) fn keep_within(&self, org_id: OrgId, slot: &Slot, live: &Arc<Live>) {
        if self.held.load(Ordering::Relaxed) <= self.budget {
            return;
        }
        let room = self.make_room(org_id, live.bytes.load(Ordering::Relaxed), false);
        if room == Room::Kept {
            return;
        }
        let mut ready = slot.ready.write().unwrap_or_else(|e| e.into_inner());
        if ready.as_ref().is_some_and(|l| Arc::ptr_eq(l, live)) {
            *ready = None;
            if room == Room::TooLarge {
                slot.refused.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl Live {
    /// Records that the index holds `bytes` now (in the indexes' total too).
    pub(super) fn measured(&self, bytes: usize) {
        let before = self.bytes.swap(bytes, Ordering::Relaxed);
        self.held.fetch_add(bytes, Ordering::Relaxed);
        self.held.fetch_sub(before, Ordering::Relaxed);
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.held
            .fetch_sub(self.bytes.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// An index held, as [`victims`] weighs it.
#[derive(Debug, Clone, Copy)]
struct Held {
    uses: u64,
    used: u64,
    bytes: usize,
}

/// Which of the indexes `held` to drop so that `need` more bytes fit in `budget`: the
/// least used first, the least recently used among equals (their positions in `held`).
/// `None` when that would drop an index used more often than `uses` (when given).
fn victims(held: &[Held], need: usize, budget: usize, uses: Option<u64>) -> Option<Vec<usize>> {
    let mut total: usize = held.iter().map(|h| h.bytes).sum::<usize>() + need;
    let mut order: Vec<usize> = (0..held.len()).collect();
    order.sort_by_key(|&i| (held[i].uses, held[i].used));
    let mut drop = Vec::new();
    for i in order {
        if total <= budget {
            break;
        }
        if uses.is_some_and(|u| held[i].uses > u) {
            return None;
        }
        drop.push(i);
        total -= held[i].bytes;
    }
    Some(drop)
}
