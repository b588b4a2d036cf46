//! The bytes of a sparse chunk: its members as LEB128 varint gaps, and the conversions
//! between members, gaps and bitsets.

use std::slice;

use crate::block::{Block, bit, word};

/// Where [`seek`] stopped: the varint at `start..end` encodes `value`, the first member
/// at least the one sought; `next` is one past the member before it (0 when none).
pub(super) struct At {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) next: u32,
    pub(super) value: u32,
}

/// The first member of varint gaps `bytes` that is at least `low`.
pub(super) fn seek(bytes: &[u8], low: u32) -> Option<At> {
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

/// How many bytes `lows` (ascending, distinct) take as varint gaps.
pub(super) fn sparse_size(lows: &[u16]) -> usize {
    let mut size = 0;
    let mut prev: Option<u16> = None;
    for &low in lows {
        size += varint(gap(prev, low)).1;
        prev = Some(low);
    }
    size
}

/// Appends `lows` (ascending, distinct) as varint gaps.
pub(super) fn push_sparse(bytes: &mut Vec<u8>, lows: &[u16]) {
    let mut prev: Option<u16> = None;
    for &low in lows {
        push_varint(bytes, gap(prev, low));
        prev = Some(low);
    }
}

/// Sets in `out` the bits of `lows`.
pub(super) fn set_bits(out: &mut Block, lows: &[u16]) {
    for &low in lows {
        out[word(low.into())] |= bit(low.into());
    }
}

/// `lows` as a bitset.
pub(super) fn block_of(lows: &[u16]) -> Box<Block> {
    let mut b: Box<Block> = Box::new([0; 1024]);
    set_bits(&mut b, lows);
    b
}

/// Calls `f` with each member of varint gaps `bytes`, ascending.
#[inline]
pub(super) fn for_each_low(bytes: &[u8], mut f: impl FnMut(u32)) {
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
pub(super) fn next_gap(rest: &mut slice::Iter<'_, u8>) -> Option<u32> {
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
pub(super) fn varint(mut v: u32) -> ([u8; 3], usize) {
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

pub(super) fn push_varint(bytes: &mut Vec<u8>, v: u32) {
    let (b, n) = varint(v);
    bytes.extend_from_slice(&b[..n]);
}

/// Reads the varint at `*at` of `bytes` (as [`next_gap`] does; 0 past the end), and
/// moves past it.
pub(crate) fn read_varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut rest = bytes[*at..].iter();
    let v = next_gap(&mut rest).unwrap_or(0);
    *at = bytes.len() - rest.len();
    v
}

/// Appends `v`, any `u32`, as a varint (up to five bytes; [`next_gap`] reads it).
pub(crate) fn push_varint_u32(bytes: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        bytes.push((v as u8) | 0x80);
        v >>= 7;
    }
    bytes.push(v as u8);
}

/// The varint gap stored for `low` after `prev` (the first member as itself).
fn gap(prev: Option<u16>, low: u16) -> u32 {
    match prev {
        None => u32::from(low),
        Some(p) => u32::from(low) - u32::from(p) - 1,
    }
}

pub(super) fn split(o: u32) -> (u16, u16) {
    ((o >> 16) as u16, o as u16)
}

pub(super) fn join(key: u16, low: u16) -> u32 {
    (u32::from(key) << 16) | u32::from(low)
}
