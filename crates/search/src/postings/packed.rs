//! Packed sets: read-only sets of ordinals below 65,536 (one chunk) written one after
//! the other into a caller's buffer, which is how the words of a small organization's
//! built index keep their jobs.
//!
//! A [`Postings`] of one chunk costs its chunk list, its varints' own allocation and the
//! allocator's bookkeeping of both: about 70 bytes beside the varints, when a word of a
//! board of a thousand jobs has about 30 bytes of them. Packed, a set takes its varints
//! and a header of one to three bytes.

use super::{
    Block, Postings, SPARSE_MAX, bit, block_and, block_or, for_each_low, next_gap, push_varint,
    push_varint_u32, sparse_and_into, word,
};

/// A set packed by [`pack_set`], read where it starts.
#[derive(Debug, Clone, Copy)]
pub struct PackedSet<'a> {
    len: u32,
    data: PackedData<'a>,
}

#[derive(Debug, Clone, Copy)]
enum PackedData<'a> {
    Sparse(&'a [u8]),
    Dense(&'a Block),
}

/// A set to combine, wherever it is kept.
#[derive(Debug, Clone, Copy)]
pub enum SetRef<'a> {
    Postings(&'a Postings),
    Packed(PackedSet<'a>),
    /// Ordinals below 65,536, ascending and distinct.
    Lows(&'a [u16]),
}

/// How many bytes sets of `members` members in all take at most when packed.
pub fn packed_bound(sets: usize, members: usize) -> usize {
    sets * 10 + members * 3
}

/// Appends set `lows` (ascending, distinct): a header varint, `len << 1` then the
/// members as varint gaps (as a sparse chunk of [`Postings`] has them), or `len << 1 | 1`
/// then the number of its bitset, pushed on `dense`, when the varints would pass
/// [`SPARSE_MAX`].
pub fn pack_set(lows: &[u16], bytes: &mut Vec<u8>, dense: &mut Vec<Box<Block>>) {
    let size: usize = lows
        .iter()
        .scan(None, |prev: &mut Option<u16>, &low| {
            let n = super::varint(super::gap(*prev, low)).1;
            *prev = Some(low);
            Some(n)
        })
        .sum();
    let len = lows.len() as u32;
    if size > SPARSE_MAX {
        let mut b: Box<Block> = Box::new([0; 1024]);
        for &low in lows {
            b[word(low.into())] |= bit(low.into());
        }
        push_varint_u32(bytes, (len << 1) | 1);
        push_varint_u32(bytes, dense.len() as u32);
        dense.push(b);
    } else {
        push_varint_u32(bytes, len << 1);
        let mut prev = None;
        for &low in lows {
            push_varint(bytes, super::gap(prev, low));
            prev = Some(low);
        }
    }
}

/// The set [`pack_set`] packed as `bytes` (exactly its bytes), with the bitsets it
/// numbers in `dense`.
pub fn unpack_set<'a>(bytes: &'a [u8], dense: &'a [Box<Block>]) -> PackedSet<'a> {
    let mut rest = bytes.iter();
    let header = next_gap(&mut rest).unwrap_or(0);
    let len = header >> 1;
    let data = if header & 1 == 1 {
        let n = next_gap(&mut rest).unwrap_or(0) as usize;
        PackedData::Dense(&dense[n])
    } else {
        PackedData::Sparse(rest.as_slice())
    };
    PackedSet { len, data }
}

impl PackedSet<'_> {
    /// How many members.
    pub fn len(&self) -> u64 {
        u64::from(self.len)
    }

    /// True when the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The members, ascending.
    pub fn lows(&self) -> Vec<u16> {
        let mut out = Vec::with_capacity(self.len as usize);
        match self.data {
            PackedData::Sparse(bytes) => for_each_low(bytes, |v| out.push(v as u16)),
            PackedData::Dense(b) => out.extend(crate::block::block_lows(b)),
        }
        out
    }
}

impl SetRef<'_> {
    /// How many members.
    pub fn len(&self) -> u64 {
        match self {
            SetRef::Postings(p) => p.len(),
            SetRef::Packed(p) => p.len(),
            SetRef::Lows(l) => l.len() as u64,
        }
    }

    /// True when the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets in `out` the bits of the members of chunk `key`.
    pub fn or_into(&self, key: u16, out: &mut Block) {
        match self {
            SetRef::Postings(p) => p.or_into(key, out),
            SetRef::Packed(_) | SetRef::Lows(_) if key != 0 => {}
            SetRef::Packed(p) => match p.data {
                PackedData::Sparse(bytes) => for_each_low(bytes, |v| out[word(v)] |= bit(v)),
                PackedData::Dense(b) => block_or(out, b),
            },
            SetRef::Lows(l) => {
                for &v in *l {
                    out[word(v.into())] |= bit(v.into());
                }
            }
        }
    }

    /// Keeps in `out` only the bits of members of chunk `key`.
    pub fn and_into(&self, key: u16, out: &mut Block) {
        match self {
            SetRef::Postings(p) => p.and_into(key, out),
            SetRef::Packed(_) | SetRef::Lows(_) if key != 0 => out.fill(0),
            SetRef::Packed(p) => match p.data {
                PackedData::Sparse(bytes) => sparse_and_into(bytes, out),
                PackedData::Dense(b) => block_and(out, b),
            },
            SetRef::Lows(l) => {
                // As a sparse chunk: each word masked with its members, those between
                // members cleared.
                let mut at = 0;
                let mut mask = 0;
                for &v in *l {
                    let w = word(v.into());
                    if w != at {
                        out[at] &= mask;
                        out[at + 1..w].fill(0);
                        at = w;
                        mask = 0;
                    }
                    mask |= bit(v.into());
                }
                out[at] &= mask;
                out[at + 1..].fill(0);
            }
        }
    }
}

impl<'a> From<&'a Postings> for SetRef<'a> {
    fn from(p: &'a Postings) -> SetRef<'a> {
        SetRef::Postings(p)
    }
}
