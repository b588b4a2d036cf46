//! Packed sets: read-only sets of ordinals below 65,536 (one chunk) written one after
//! the other into a caller's buffer, which is how the words of a small organization's
//! built index keep their jobs.
//!
//! A [`Postings`] of one chunk costs its chunk list, its varints' own allocation and the
//! allocator's bookkeeping of both: about 70 bytes beside the varints, when a word of a
//! board of a thousand jobs has about 30 bytes of them. Packed, a set takes its varints
//! and a header of one to three bytes.

use super::{
    Block, ChunkData, Keep, Postings, SPARSE_MAX, block_of, next_gap, push_sparse, push_varint_u32,
    set_bits, sparse_size,
};

/// A set packed by [`pack_set`], read where it starts.
#[derive(Debug, Clone, Copy)]
pub struct PackedSet<'a> {
    len: u32,
    data: ChunkData<'a>,
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
    let len = lows.len() as u32;
    if sparse_size(lows) > SPARSE_MAX {
        push_varint_u32(bytes, (len << 1) | 1);
        push_varint_u32(bytes, dense.len() as u32);
        dense.push(block_of(lows));
    } else {
        push_varint_u32(bytes, len << 1);
        push_sparse(bytes, lows);
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
        ChunkData::Dense(&dense[n])
    } else {
        ChunkData::Sparse(rest.as_slice())
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
        self.data.lows().collect()
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
            SetRef::Packed(p) => p.data.or_into(out),
            SetRef::Lows(l) => set_bits(out, l),
        }
    }

    /// Keeps in `out` only the bits of members of chunk `key`.
    pub fn and_into(&self, key: u16, out: &mut Block) {
        match self {
            SetRef::Postings(p) => p.and_into(key, out),
            SetRef::Packed(_) | SetRef::Lows(_) if key != 0 => out.fill(0),
            SetRef::Packed(p) => p.data.and_into(out),
            SetRef::Lows(l) => {
                let mut keep = Keep::new(out);
                for &v in *l {
                    keep.member(v.into());
                }
                keep.finish();
            }
        }
    }
}

impl<'a> From<&'a Postings> for SetRef<'a> {
    fn from(p: &'a Postings) -> SetRef<'a> {
        SetRef::Postings(p)
    }
}
