//! Postings: compact in-memory sets of `u32` ordinals, the posting lists of an in-memory
//! search index (one set per word, an ordinal per document).
//!
//! Memory comes first (tens of millions of postings must fit in about 100 MB), speed
//! second, and the layout follows from both:
//!
//! - Ordinals are cut into fixed-range chunks of 65,536 (the high 16 bits are the
//!   chunk's key, the low 16 bits the member). Every set cuts at the same places, so the
//!   sets of different words line up chunk by chunk and a query combines them one
//!   [`Block`] at a time, skipping the keys a required word lacks.
//! - A sparse chunk stores the gaps between its members as LEB128 varints. A word on 3%
//!   of the documents has gaps of about 33, one byte per member: half of a `u16` array.
//!   Appending above the maximum (how the index is built, and how it grows) adds one
//!   varint.
//! - A chunk whose varints would pass 4 KiB (a word on more than about one job in
//!   sixteen) becomes a bitset of 65,536 bits (8 KiB): at most twice the bytes, and
//!   combined with other sets a word at a time instead of a member at a time, which is
//!   what makes common words cheap to search; it goes back to varints only once its count
//!   falls below 1,024, so a chunk near the line does not flip at every change.

mod codec;
mod packed;

use std::{fmt, mem, slice};

pub use crate::block::{
    Block, block_and, block_andnot, block_count, block_is_empty, block_iter_desc, block_or,
};
use crate::block::{BlockLows, bit, block_lows, word};
use codec::{
    block_of, for_each_low, join, next_gap, push_sparse, push_varint, seek, set_bits, sparse_size,
    split, varint,
};
pub(crate) use codec::{push_varint_u32, read_varint};
pub use packed::{PackedSet, SetRef, pack_set, packed_bound, unpack_set};

/// Past this many bytes of varints, a chunk is a bitset (which takes twice as many).
const SPARSE_MAX: usize = 4096;

/// Below this many members, a bitset chunk goes back to varints (at most three bytes
/// each, so always within [`SPARSE_MAX`]).
const DENSE_MIN: u32 = 1024;

/// A set of `u32` ordinals, stored as chunks of 65,536 (see the module documentation).
#[derive(Clone, Default)]
pub struct Postings {
    /// Non-empty chunks, ascending by key, in exactly the room they take (most sets
    /// have one; a chunk is added once per 65,536 ordinals at most).
    chunks: Vec<Chunk>,
}

/// The members whose high 16 bits are `key`.
#[derive(Clone)]
struct Chunk {
    key: u16,
    /// The largest member (low 16 bits).
    max: u16,
    /// How many members (1 to 65,536).
    len: u32,
    data: Data,
}

#[derive(Clone)]
enum Data {
    /// Ascending members as varint gaps: the first as itself, each next as
    /// `low - previous - 1`.
    Sparse(Vec<u8>),
    Dense(Box<Block>),
}

impl Postings {
    /// An empty set.
    pub fn new() -> Postings {
        Postings { chunks: Vec::new() }
    }

    /// Adds `o`; true when it was not a member. Appending above the maximum is
    /// amortised O(1); below it, the one chunk is rewritten (or a bit set).
    pub fn insert(&mut self, o: u32) -> bool {
        let (key, low) = split(o);
        match self.chunks.last_mut() {
            Some(last) if last.key == key => return last.insert(low),
            Some(last) if last.key > key => {}
            _ => {
                self.chunks.reserve_exact(1);
                self.chunks.push(Chunk::one(key, low));
                return true;
            }
        }
        match self.find(key) {
            Ok(i) => self.chunks[i].insert(low),
            Err(i) => {
                self.chunks.insert(i, Chunk::one(key, low));
                true
            }
        }
    }

    /// Adds a whole chunk: `lows`, ascending and distinct, under `key` (a build, one
    /// chunk at a time). Above every member's chunk, the chunk takes exactly the bytes it
    /// needs, so a build leaves no grown-and-freed memory behind; otherwise the members
    /// are inserted one by one.
    pub fn push_chunk(&mut self, key: u16, lows: &[u16]) {
        let Some(&max) = lows.last() else {
            return;
        };
        if self.chunks.last().is_some_and(|c| c.key >= key) {
            for &low in lows {
                self.insert(join(key, low));
            }
            return;
        }
        let size = sparse_size(lows);
        let data = if size > SPARSE_MAX {
            Data::Dense(block_of(lows))
        } else {
            let mut bytes = Vec::with_capacity(size);
            push_sparse(&mut bytes, lows);
            Data::Sparse(bytes)
        };
        self.chunks.reserve_exact(1);
        self.chunks.push(Chunk {
            key,
            max,
            len: lows.len() as u32,
            data,
        });
    }

    /// Adds a whole chunk given as a bitset, under `key`, which must be above every
    /// member's (otherwise its members are inserted one by one): as a bitset when its
    /// varints would pass the limit, else as varints, in exactly the bytes needed.
    pub fn push_block(&mut self, key: u16, block: &Block) {
        let len = block_count(block);
        if len == 0 {
            return;
        }
        if len >= DENSE_MIN && self.chunks.last().is_none_or(|c| c.key < key) {
            let max = block_iter_desc(block).next().unwrap_or(0);
            let lows = block_iter_desc(block);
            let mut size = 0;
            let mut next: Option<u16> = None;
            for low in lows {
                if let Some(n) = next {
                    size += varint(u32::from(n) - u32::from(low) - 1).1;
                }
                next = Some(low);
            }
            size += varint(u32::from(next.unwrap_or(0))).1;
            if size > SPARSE_MAX {
                self.chunks.reserve_exact(1);
                self.chunks.push(Chunk {
                    key,
                    max,
                    len,
                    data: Data::Dense(Box::new(*block)),
                });
                return;
            }
        }
        let mut lows: Vec<u16> = block_iter_desc(block).collect();
        lows.reverse();
        self.push_chunk(key, &lows);
    }

    /// Takes `o` out; true when it was a member.
    pub fn remove(&mut self, o: u32) -> bool {
        let (key, low) = split(o);
        let Ok(i) = self.find(key) else {
            return false;
        };
        let removed = self.chunks[i].remove(low);
        if self.chunks[i].len == 0 {
            self.chunks.remove(i);
        }
        removed
    }

    /// True when `o` is a member.
    pub fn contains(&self, o: u32) -> bool {
        let (key, low) = split(o);
        self.chunk(key).is_some_and(|c| c.contains(low))
    }

    /// How many members.
    pub fn len(&self) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.len)).sum()
    }

    /// True when the set has no members.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The largest member.
    #[cfg(test)]
    pub fn max(&self) -> Option<u32> {
        self.chunks.last().map(|c| join(c.key, c.max))
    }

    /// How many members have the high 16 bits `key` (0 when none).
    #[cfg(test)]
    pub fn chunk_len(&self, key: u16) -> u32 {
        self.chunk(key).map_or(0, |c| c.len)
    }

    /// The keys (high 16 bits) of the chunks that have members, ascending.
    #[cfg(test)]
    pub fn keys(&self) -> impl Iterator<Item = u16> + '_ {
        self.chunks.iter().map(|c| c.key)
    }

    /// Sets in `out` the bits of the members of chunk `key` (nothing when it is absent).
    pub fn or_into(&self, key: u16, out: &mut Block) {
        if let Some(c) = self.chunk(key) {
            c.data().or_into(out);
        }
    }

    /// Keeps in `out` only the bits of members of chunk `key` (clears `out` when it is
    /// absent).
    pub fn and_into(&self, key: u16, out: &mut Block) {
        match self.chunk(key) {
            None => out.fill(0),
            Some(c) => c.data().and_into(out),
        }
    }

    /// Clears in `out` the bits of the members of chunk `key`.
    pub fn andnot_into(&self, key: u16, out: &mut Block) {
        if let Some(c) = self.chunk(key) {
            c.data().andnot_into(out);
        }
    }

    /// The members, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.chunks
            .iter()
            .flat_map(|c| c.lows().map(move |low| join(c.key, low)))
    }

    /// The bytes the set holds on the heap (allocated capacity), for a memory budget.
    pub fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * mem::size_of::<Chunk>()
            + self
                .chunks
                .iter()
                .map(|c| match &c.data {
                    Data::Sparse(bytes) => bytes.capacity(),
                    Data::Dense(_) => mem::size_of::<Block>(),
                })
                .sum::<usize>()
    }

    /// Gives back the spare capacity of the chunk list and of every sparse chunk (after
    /// a build, whose appends leave up to half of each unused).
    pub fn shrink(&mut self) {
        self.chunks.shrink_to_fit();
        for c in &mut self.chunks {
            if let Data::Sparse(bytes) = &mut c.data {
                bytes.shrink_to_fit();
            }
        }
    }

    /// Gives back the spare capacity of chunk `key`, one that is complete (an index that
    /// grows one ordinal at a time seals each chunk once no job can land in it any more,
    /// so a grown index holds about what a built one does).
    pub fn seal(&mut self, key: u16) {
        if let Ok(i) = self.find(key)
            && let Data::Sparse(bytes) = &mut self.chunks[i].data
        {
            bytes.shrink_to_fit();
        }
    }

    fn find(&self, key: u16) -> Result<usize, usize> {
        self.chunks.binary_search_by_key(&key, |c| c.key)
    }

    fn chunk(&self, key: u16) -> Option<&Chunk> {
        self.find(key).ok().map(|i| &self.chunks[i])
    }
}

impl fmt::Debug for Postings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl Chunk {
    fn one(key: u16, low: u16) -> Chunk {
        let mut bytes = Vec::new();
        push_varint(&mut bytes, u32::from(low));
        Chunk {
            key,
            max: low,
            len: 1,
            data: Data::Sparse(bytes),
        }
    }

    fn insert(&mut self, low: u16) -> bool {
        let bytes = match &mut self.data {
            Data::Dense(b) => {
                if b[word(low.into())] & bit(low.into()) != 0 {
                    return false;
                }
                b[word(low.into())] |= bit(low.into());
                self.len += 1;
                self.max = self.max.max(low);
                return true;
            }
            Data::Sparse(bytes) => bytes,
        };
        let low32 = u32::from(low);
        if low > self.max {
            let (gap, n) = varint(low32 - u32::from(self.max) - 1);
            if bytes.len() + n > SPARSE_MAX {
                self.densify(low);
            } else {
                bytes.extend_from_slice(&gap[..n]);
            }
            self.max = low;
            self.len += 1;
            return true;
        }
        // `low` is at most the maximum, so some member is at least `low`.
        let Some(at) = seek(bytes, low32) else {
            return false;
        };
        if at.value == low32 {
            return false;
        }
        let (before, n1) = varint(low32 - at.next);
        let (after, n2) = varint(at.value - low32 - 1);
        if bytes.len() - (at.end - at.start) + n1 + n2 > SPARSE_MAX {
            self.densify(low);
        } else {
            bytes.splice(
                at.start..at.end,
                before[..n1].iter().chain(&after[..n2]).copied(),
            );
        }
        self.len += 1;
        true
    }

    fn remove(&mut self, low: u16) -> bool {
        if low > self.max {
            return false;
        }
        let low32 = u32::from(low);
        match &mut self.data {
            Data::Dense(b) => {
                if b[word(low32)] & bit(low32) == 0 {
                    return false;
                }
                b[word(low32)] &= !bit(low32);
                self.len -= 1;
                if self.len == 0 {
                    return true;
                }
                if low == self.max {
                    self.max = block_iter_desc(b).next().unwrap_or(0);
                }
                if self.len < DENSE_MIN {
                    let mut bytes = Vec::new();
                    let mut next = 0;
                    for v in block_lows(b) {
                        push_varint(&mut bytes, u32::from(v) - next);
                        next = u32::from(v) + 1;
                    }
                    self.data = Data::Sparse(bytes);
                }
                true
            }
            Data::Sparse(bytes) => {
                let Some(at) = seek(bytes, low32) else {
                    return false;
                };
                if at.value != low32 {
                    return false;
                }
                self.len -= 1;
                if at.end == bytes.len() {
                    bytes.truncate(at.start);
                    // The member before, when there is one (else the chunk is empty).
                    self.max = at.next.saturating_sub(1) as u16;
                } else {
                    let mut rest = bytes[at.end..].iter();
                    let gap = next_gap(&mut rest).unwrap_or(0);
                    let end = bytes.len() - rest.len();
                    let (merged, n) = varint(gap + low32 + 1 - at.next);
                    bytes.splice(at.start..end, merged[..n].iter().copied());
                }
                true
            }
        }
    }

    fn contains(&self, low: u16) -> bool {
        match &self.data {
            Data::Dense(b) => b[word(low.into())] & bit(low.into()) != 0,
            Data::Sparse(bytes) => {
                let low = u32::from(low);
                low <= u32::from(self.max) && seek(bytes, low).is_some_and(|at| at.value == low)
            }
        }
    }

    /// Turns a sparse chunk into a bitset, with `low` added.
    fn densify(&mut self, low: u16) {
        let mut block = Box::new([0u64; 1024]);
        if let Data::Sparse(bytes) = &self.data {
            for_each_low(bytes, |v| block[word(v)] |= bit(v));
        }
        block[word(low.into())] |= bit(low.into());
        self.data = Data::Dense(block);
    }

    fn lows(&self) -> Lows<'_> {
        self.data().lows()
    }

    fn data(&self) -> ChunkData<'_> {
        match &self.data {
            Data::Sparse(bytes) => ChunkData::Sparse(bytes),
            Data::Dense(b) => ChunkData::Dense(b),
        }
    }
}

/// A chunk's members as stored (a [`Postings`] chunk's, or a set [`pack_set`] packed),
/// borrowed: what a query combines with a block.
#[derive(Debug, Clone, Copy)]
enum ChunkData<'a> {
    Sparse(&'a [u8]),
    Dense(&'a Block),
}

impl<'a> ChunkData<'a> {
    /// `out |= self`.
    fn or_into(self, out: &mut Block) {
        match self {
            ChunkData::Dense(b) => block_or(out, b),
            ChunkData::Sparse(bytes) => for_each_low(bytes, |v| out[word(v)] |= bit(v)),
        }
    }

    /// `out &= self`.
    fn and_into(self, out: &mut Block) {
        match self {
            ChunkData::Dense(b) => block_and(out, b),
            ChunkData::Sparse(bytes) => {
                let mut keep = Keep::new(out);
                for_each_low(bytes, |v| keep.member(v));
                keep.finish();
            }
        }
    }

    /// `out &= !self`.
    fn andnot_into(self, out: &mut Block) {
        match self {
            ChunkData::Dense(b) => block_andnot(out, b),
            ChunkData::Sparse(bytes) => for_each_low(bytes, |v| out[word(v)] &= !bit(v)),
        }
    }

    /// The members, ascending.
    fn lows(self) -> Lows<'a> {
        match self {
            ChunkData::Sparse(bytes) => Lows::Sparse {
                bytes: bytes.iter(),
                next: 0,
            },
            ChunkData::Dense(b) => Lows::Dense(block_lows(b)),
        }
    }
}

/// `out &=` a set given member by member, ascending, in one pass over `out`: each word
/// is masked with the members that fall in it, and the words between members cleared.
struct Keep<'a> {
    out: &'a mut Block,
    at: usize,
    mask: u64,
}

impl<'a> Keep<'a> {
    fn new(out: &'a mut Block) -> Keep<'a> {
        Keep {
            out,
            at: 0,
            mask: 0,
        }
    }

    #[inline]
    fn member(&mut self, v: u32) {
        let w = word(v);
        if w != self.at {
            self.out[self.at] &= self.mask;
            self.out[self.at + 1..w].fill(0);
            self.at = w;
            self.mask = 0;
        }
        self.mask |= bit(v);
    }

    fn finish(self) {
        self.out[self.at] &= self.mask;
        self.out[self.at + 1..].fill(0);
    }
}

/// The members of one chunk, ascending.
enum Lows<'a> {
    Sparse {
        bytes: slice::Iter<'a, u8>,
        next: u32,
    },
    Dense(BlockLows<'a>),
}

impl Iterator for Lows<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        match self {
            Lows::Sparse { bytes, next } => {
                let v = *next + next_gap(bytes)?;
                *next = v + 1;
                Some(v as u16)
            }
            Lows::Dense(b) => b.next(),
        }
    }
}

#[cfg(test)]
mod tests;
