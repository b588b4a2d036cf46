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

use std::{fmt, mem, slice};

/// The bitset of one chunk: bit `low` is bit `low % 64` of word `low / 64`.
pub type Block = [u64; 1024];

/// Past this many bytes of varints, a chunk is a bitset (which takes twice as many).
const SPARSE_MAX: usize = 4096;

/// Below this many members, a bitset chunk goes back to varints (at most three bytes
/// each, so always within [`SPARSE_MAX`]).
const DENSE_MIN: u32 = 1024;

/// A set of `u32` ordinals, stored as chunks of 65,536 (see the module documentation).
#[derive(Clone, Default)]
pub struct Postings {
    /// Non-empty chunks, ascending by key.
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
        let mut size = 0;
        let mut prev: Option<u16> = None;
        for &low in lows {
            size += varint(gap(prev, low)).1;
            prev = Some(low);
        }
        let data = if size > SPARSE_MAX {
            let mut b: Box<Block> = Box::new([0; 1024]);
            for &low in lows {
                b[usize::from(low) / 64] |= 1 << (low % 64);
            }
            Data::Dense(b)
        } else {
            let mut bytes = Vec::with_capacity(size);
            let mut prev: Option<u16> = None;
            for &low in lows {
                push_varint(&mut bytes, gap(prev, low));
                prev = Some(low);
            }
            Data::Sparse(bytes)
        };
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
        match self.chunk(key).map(|c| &c.data) {
            None => {}
            Some(Data::Dense(b)) => block_or(out, b),
            Some(Data::Sparse(bytes)) => for_each_low(bytes, |v| out[word(v)] |= bit(v)),
        }
    }

    /// Keeps in `out` only the bits of members of chunk `key` (clears `out` when it is
    /// absent).
    pub fn and_into(&self, key: u16, out: &mut Block) {
        match self.chunk(key).map(|c| &c.data) {
            None => out.fill(0),
            Some(Data::Dense(b)) => block_and(out, b),
            Some(Data::Sparse(bytes)) => {
                // One pass over `out`: each word is masked with the members that fall in
                // it, and the words between members are cleared.
                let mut at = 0;
                let mut mask = 0;
                for_each_low(bytes, |v| {
                    let w = word(v);
                    if w != at {
                        out[at] &= mask;
                        out[at + 1..w].fill(0);
                        at = w;
                        mask = 0;
                    }
                    mask |= bit(v);
                });
                out[at] &= mask;
                out[at + 1..].fill(0);
            }
        }
    }

    /// Clears in `out` the bits of the members of chunk `key`.
    pub fn andnot_into(&self, key: u16, out: &mut Block) {
        match self.chunk(key).map(|c| &c.data) {
            None => {}
            Some(Data::Dense(b)) => block_andnot(out, b),
            Some(Data::Sparse(bytes)) => for_each_low(bytes, |v| out[word(v)] &= !bit(v)),
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
        match &self.data {
            Data::Sparse(bytes) => Lows::Sparse {
                bytes: bytes.iter(),
                next: 0,
            },
            Data::Dense(b) => Lows::Dense(block_lows(b)),
        }
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

/// The set bits of a block, ascending.
struct BlockLows<'a> {
    block: &'a Block,
    at: usize,
    bits: u64,
}

impl Iterator for BlockLows<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        while self.bits == 0 {
            self.at += 1;
            self.bits = *self.block.get(self.at)?;
        }
        let t = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some((self.at * 64) as u16 + t as u16)
    }
}

fn block_lows(block: &Block) -> BlockLows<'_> {
    BlockLows {
        block,
        at: 0,
        bits: block[0],
    }
}

/// Where [`seek`] stopped: the varint at `start..end` encodes `value`, the first member
/// at least the one sought; `next` is one past the member before it (0 when none).
struct At {
    start: usize,
    end: usize,
    next: u32,
    value: u32,
}

/// The first member of varint gaps `bytes` that is at least `low`.
fn seek(bytes: &[u8], low: u32) -> Option<At> {
    let mut rest = bytes.iter();
    let mut next = 0;
    loop {
        let start = bytes.len() - rest.len();
        let value = next + next_gap(&mut rest)?;
        if value >= low {
            return Some(At {
                start,
                end: bytes.len() - rest.len(),
                next,
                value,
            });
        }
        next = value + 1;
    }
}

/// Calls `f` with each member of varint gaps `bytes`, ascending.
#[inline]
fn for_each_low(bytes: &[u8], mut f: impl FnMut(u32)) {
    let mut rest = bytes.iter();
    let mut next = 0;
    while let Some(gap) = next_gap(&mut rest) {
        let v = next + gap;
        f(v);
        next = v + 1;
    }
}

/// Reads one varint (most are one byte).
#[inline(always)]
fn next_gap(rest: &mut slice::Iter<'_, u8>) -> Option<u32> {
    let &b = rest.next()?;
    if b < 0x80 {
        return Some(u32::from(b));
    }
    let mut gap = u32::from(b & 0x7f);
    let mut shift = 7;
    for &b in rest.by_ref() {
        gap |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    Some(gap)
}

/// `v` as a varint: its bytes and how many (at most three, as `v` < 65,536).
fn varint(mut v: u32) -> ([u8; 3], usize) {
    let mut out = [0; 3];
    let mut n = 0;
    while v >= 0x80 {
        out[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    (out, n + 1)
}

fn push_varint(bytes: &mut Vec<u8>, v: u32) {
    let (b, n) = varint(v);
    bytes.extend_from_slice(&b[..n]);
}

/// The varint gap stored for `low` after `prev` (the first member as itself).
fn gap(prev: Option<u16>, low: u16) -> u32 {
    match prev {
        None => u32::from(low),
        Some(p) => u32::from(low) - u32::from(p) - 1,
    }
}

fn split(o: u32) -> (u16, u16) {
    ((o >> 16) as u16, o as u16)
}

fn join(key: u16, low: u16) -> u32 {
    (u32::from(key) << 16) | u32::from(low)
}

/// The word of bit `low` in a block (masked, so indexing needs no bounds check).
#[inline(always)]
fn word(low: u32) -> usize {
    (low as usize >> 6) & 1023
}

#[inline(always)]
fn bit(low: u32) -> u64 {
    1 << (low & 63)
}

/// How many bits of `b` are set.
pub fn block_count(b: &Block) -> u32 {
    b.iter().map(|w| w.count_ones()).sum()
}

/// True when no bit of `b` is set.
pub fn block_is_empty(b: &Block) -> bool {
    b.iter().all(|&w| w == 0)
}

/// The set bits of `b`, from the highest to the lowest.
pub fn block_iter_desc(b: &Block) -> impl Iterator<Item = u16> + '_ {
    b.iter().enumerate().rev().flat_map(|(at, &w)| {
        let mut bits = w;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let t = 63 - bits.leading_zeros();
            bits &= !(1 << t);
            Some((at * 64) as u16 + t as u16)
        })
    })
}

/// `a &= b`, word by word.
pub fn block_and(a: &mut Block, b: &Block) {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= y;
    }
}

/// `a &= !b`, word by word.
pub fn block_andnot(a: &mut Block, b: &Block) {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= !y;
    }
}

/// `a |= b`, word by word.
pub fn block_or(a: &mut Block, b: &Block) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// A small deterministic generator (64-bit LCG, high bits out).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 32) as u32
        }

        fn below(&mut self, n: u32) -> u32 {
            ((u64::from(self.next()) * u64::from(n)) >> 32) as u32
        }

        /// True with probability `per_million` / 1,000,000.
        fn chance(&mut self, per_million: u32) -> bool {
            self.below(1_000_000) < per_million
        }
    }

    fn block_of(want: &BTreeSet<u32>, key: u16) -> Block {
        let mut b = [0; 1024];
        for &o in want.range(join(key, 0)..=join(key, u16::MAX)) {
            b[word(o & 0xffff)] |= bit(o & 0xffff);
        }
        b
    }

    fn noise(rng: &mut Lcg) -> Block {
        let mut b = [0; 1024];
        for w in &mut b {
            *w = (u64::from(rng.next()) << 32) | u64::from(rng.next());
        }
        b
    }

    fn dense_chunks(p: &Postings) -> usize {
        p.chunks
            .iter()
            .filter(|c| matches!(c.data, Data::Dense(_)))
            .count()
    }

    /// Everything `p` answers agrees with `want`, including the chunks' own bookkeeping.
    fn check(p: &Postings, want: &BTreeSet<u32>, rng: &mut Lcg) {
        assert_eq!(p.len(), want.len() as u64);
        assert_eq!(p.is_empty(), want.is_empty());
        assert_eq!(p.max(), want.last().copied());
        assert!(p.iter().eq(want.iter().copied()), "iter differs");
        let keys: BTreeSet<u16> = want.iter().map(|&o| (o >> 16) as u16).collect();
        assert!(p.keys().eq(keys.iter().copied()), "keys differ");
        for c in &p.chunks {
            assert!(c.len > 0);
            assert_eq!(c.len, c.lows().count() as u32);
            assert_eq!(
                Some(join(c.key, c.max)),
                c.lows().last().map(|l| join(c.key, l))
            );
            if let Data::Sparse(bytes) = &c.data {
                assert!(bytes.len() <= SPARSE_MAX);
            } else {
                assert!(c.len >= DENSE_MIN);
            }
        }
        let mut probe_keys: Vec<u16> = keys.iter().copied().collect();
        probe_keys.push(rng.next() as u16);
        if let Some(&k) = keys.last() {
            probe_keys.push(k.wrapping_add(1));
        }
        for key in probe_keys {
            let members = block_of(want, key);
            assert_eq!(p.chunk_len(key), block_count(&members));
            let start = noise(rng);
            let mut out = start;
            p.or_into(key, &mut out);
            let mut expect = start;
            block_or(&mut expect, &members);
            assert!(out == expect, "or_into differs in chunk {key}");
            let mut out = start;
            p.and_into(key, &mut out);
            let mut expect = start;
            block_and(&mut expect, &members);
            assert!(out == expect, "and_into differs in chunk {key}");
            let mut out = start;
            p.andnot_into(key, &mut out);
            let mut expect = start;
            block_andnot(&mut expect, &members);
            assert!(out == expect, "andnot_into differs in chunk {key}");
        }
        for &o in want.iter().take(50) {
            assert!(p.contains(o));
        }
        for _ in 0..200 {
            let o = match want.last() {
                Some(&m) => rng.below(m.saturating_add(70_000)),
                None => rng.next(),
            };
            assert_eq!(p.contains(o), want.contains(&o), "contains({o})");
        }
    }

    /// Builds ascending from `start` to `end` (exclusive) with the given density.
    fn build(rng: &mut Lcg, start: u32, end: u32, per_million: u32) -> (Postings, BTreeSet<u32>) {
        let mut p = Postings::new();
        let mut want = BTreeSet::new();
        for o in start..end {
            if rng.chance(per_million) {
                assert!(p.insert(o));
                want.insert(o);
            }
        }
        (p, want)
    }

    #[test]
    fn ascending_builds_of_every_density() {
        let mut rng = Lcg(1);
        for per_million in [1_000, 30_000, 200_000, 900_000] {
            for (start, end) in [
                (0, 4 * 65_536 + 17),
                (65_536 - 300, 65_536 + 300),
                (u32::MAX - 3 * 65_536, u32::MAX),
            ] {
                let (mut p, want) = build(&mut rng, start, end, per_million);
                check(&p, &want, &mut rng);
                p.shrink();
                check(&p, &want, &mut rng);
                if per_million >= 200_000 && end - start > 65_536 {
                    assert!(dense_chunks(&p) > 0);
                } else if per_million <= 30_000 {
                    assert_eq!(dense_chunks(&p), 0);
                }
            }
        }
    }

    #[test]
    fn chunk_boundaries_and_extremes() {
        let mut rng = Lcg(2);
        let mut p = Postings::new();
        let mut want = BTreeSet::new();
        for o in [
            65_535,
            65_536,
            0,
            u32::MAX,
            131_071,
            131_072,
            1,
            u32::MAX - 65_536,
            u32::MAX - 65_535,
            65_535,
        ] {
            assert_eq!(p.insert(o), want.insert(o), "insert({o})");
            check(&p, &want, &mut rng);
        }
        for o in [65_536, 65_535, u32::MAX, 0, 7, 131_072, 131_071] {
            assert_eq!(p.remove(o), want.remove(&o), "remove({o})");
            check(&p, &want, &mut rng);
        }
        assert!(p.insert(u32::MAX));
        assert!(!p.insert(u32::MAX));
        assert_eq!(p.max(), Some(u32::MAX));
    }

    #[test]
    fn random_inserts_and_removes_in_the_middle() {
        let mut rng = Lcg(3);
        for per_million in [1_000, 30_000, 200_000, 900_000] {
            let (mut p, mut want) = build(&mut rng, 3 * 65_536 - 5_000, 5 * 65_536, per_million);
            let start = 3 * 65_536 - 5_000;
            let end = want.last().copied().unwrap_or(start) + 1_000;
            for round in 0..3_000u32 {
                let o = start + rng.below(end - start);
                if rng.below(2) == 0 {
                    assert_eq!(p.insert(o), want.insert(o), "insert({o})");
                } else {
                    assert_eq!(p.remove(o), want.remove(&o), "remove({o})");
                }
                if round.is_multiple_of(100) {
                    check(&p, &want, &mut rng);
                } else {
                    assert_eq!(p.len(), want.len() as u64);
                    assert_eq!(p.max(), want.last().copied());
                    assert_eq!(p.contains(o), want.contains(&o));
                }
            }
            check(&p, &want, &mut rng);
            // Remove what is left of one member in two, then all.
            let all: Vec<u32> = want.iter().copied().collect();
            for &o in all.iter().step_by(2) {
                assert!(p.remove(o));
                want.remove(&o);
            }
            check(&p, &want, &mut rng);
            for &o in all.iter().rev() {
                assert_eq!(p.remove(o), want.remove(&o));
                if want.len().is_multiple_of(1_500) {
                    check(&p, &want, &mut rng);
                }
            }
            check(&p, &want, &mut rng);
            assert!(p.is_empty());
            assert_eq!(
                p.heap_bytes(),
                p.chunks.capacity() * mem::size_of::<Chunk>()
            );
        }
    }

    #[test]
    fn dense_and_sparse_both_ways() {
        let mut rng = Lcg(4);
        let base = 7 * 65_536;
        let mut p = Postings::new();
        let mut want = BTreeSet::new();
        // Random (not ascending) inserts: the chunk turns dense in the middle.
        let mut dense_at = None;
        for i in 0..12_000 {
            let o = base + rng.below(65_536);
            assert_eq!(p.insert(o), want.insert(o));
            if dense_at.is_none() && dense_chunks(&p) == 1 {
                dense_at = Some(i);
                check(&p, &want, &mut rng);
            }
        }
        assert!(dense_at.is_some());
        assert_eq!(dense_chunks(&p), 1);
        check(&p, &want, &mut rng);
        // Random removes: dense down to DENSE_MIN, then sparse again, and empty.
        let mut members: Vec<u32> = want.iter().copied().collect();
        while let Some(o) = members.pop() {
            let i = rng.below(members.len() as u32 + 1) as usize;
            let o = if i < members.len() {
                mem::replace(&mut members[i], o)
            } else {
                o
            };
            assert!(p.remove(o));
            want.remove(&o);
            let n = want.len() as u32;
            if n >= DENSE_MIN {
                assert_eq!(dense_chunks(&p), 1, "dense at {n}");
            } else {
                assert_eq!(dense_chunks(&p), 0, "sparse at {n}");
            }
            if n.is_multiple_of(997) || (DENSE_MIN - 2..=DENSE_MIN + 1).contains(&n) {
                check(&p, &want, &mut rng);
            }
        }
        check(&p, &want, &mut rng);
        // Between DENSE_MIN and the varint limit, removes keep it dense and inserts sparse:
        // no flipping at the line.
        let (mut p, mut want) = build(&mut rng, base, base + 65_536, 50_000);
        assert_eq!(dense_chunks(&p), 0);
        let mut o = base;
        while dense_chunks(&p) == 0 {
            if !want.contains(&o) {
                p.insert(o);
                want.insert(o);
            }
            o += 1;
        }
        check(&p, &want, &mut rng);
        let dense_len = want.len();
        for o in want
            .clone()
            .into_iter()
            .take(dense_len - DENSE_MIN as usize)
        {
            assert!(p.remove(o));
            want.remove(&o);
            assert_eq!(dense_chunks(&p), 1);
        }
        check(&p, &want, &mut rng);
        let first = *want.first().unwrap();
        assert!(p.remove(first));
        want.remove(&first);
        assert_eq!(dense_chunks(&p), 0);
        check(&p, &want, &mut rng);
        assert!(p.insert(first));
        want.insert(first);
        assert_eq!(dense_chunks(&p), 0);
        check(&p, &want, &mut rng);
    }

    #[test]
    fn whole_chunks_equal_members_added_one_by_one() {
        let mut rng = Lcg(11);
        for per_mille in [1, 30, 60, 70, 200, 900] {
            let mut whole = Postings::new();
            let mut blocks = Postings::new();
            let mut one_by_one = Postings::new();
            let mut want = BTreeSet::new();
            for key in [0u16, 1, 7] {
                let lows: Vec<u16> = (0..=u16::MAX)
                    .filter(|_| rng.chance(per_mille * 1_000))
                    .collect();
                whole.push_chunk(key, &lows);
                let mut b: Box<Block> = Box::new([0; 1024]);
                for &low in &lows {
                    b[usize::from(low) / 64] |= 1 << (low % 64);
                }
                blocks.push_block(key, &b);
                for &low in &lows {
                    one_by_one.insert(join(key, low));
                    want.insert(join(key, low));
                }
            }
            check(&whole, &want, &mut rng);
            check(&blocks, &want, &mut rng);
            assert_eq!(whole.heap_bytes(), blocks.heap_bytes(), "{per_mille}");
            assert_eq!(
                whole.iter().collect::<Vec<_>>(),
                one_by_one.iter().collect::<Vec<_>>()
            );
            assert!(whole.heap_bytes() <= one_by_one.heap_bytes(), "{per_mille}");
        }
    }

    #[test]
    fn three_percent_takes_about_a_byte_a_member() {
        let mut rng = Lcg(5);
        let mut p = Postings::new();
        let mut n = 0;
        for o in 0..1_000_000 {
            if rng.chance(30_000) {
                p.insert(o);
                n += 1;
            }
        }
        p.shrink();
        let bytes = p.heap_bytes();
        println!("{n} members over 1,000,000 ordinals: {bytes} heap bytes");
        assert!((29_000..31_000).contains(&n));
        assert!(bytes < 40_000, "{bytes} heap bytes");
        assert_eq!(dense_chunks(&p), 0);
    }

    #[test]
    fn half_dense_chunk_is_a_bitset() {
        let mut rng = Lcg(6);
        let (mut p, want) = build(&mut rng, 0, 65_536, 500_000);
        p.shrink();
        assert_eq!(dense_chunks(&p), 1);
        assert_eq!(
            p.heap_bytes(),
            mem::size_of::<Chunk>() + mem::size_of::<Block>()
        );
        check(&p, &want, &mut rng);
    }

    #[test]
    fn block_helpers() {
        let mut rng = Lcg(7);
        let a = noise(&mut rng);
        let mut sparse = [0u64; 1024];
        for low in [0u32, 1, 63, 64, 4_095, 65_534, 65_535] {
            sparse[word(low)] |= bit(low);
        }
        for b in [a, sparse, [0; 1024], [u64::MAX; 1024]] {
            let mut want: Vec<u16> = (0..=u16::MAX)
                .filter(|&l| b[word(l.into())] & bit(l.into()) != 0)
                .collect();
            assert_eq!(block_count(&b) as usize, want.len());
            assert_eq!(block_is_empty(&b), want.is_empty());
            assert!(block_lows(&b).eq(want.iter().copied()));
            want.reverse();
            assert!(block_iter_desc(&b).eq(want.iter().copied()));
        }
        let mut x = a;
        block_andnot(&mut x, &a);
        assert!(block_is_empty(&x));
        block_or(&mut x, &sparse);
        block_and(&mut x, &a);
        assert!(x.iter().zip(&sparse).zip(&a).all(|((x, s), a)| *x == s & a));
    }
}
