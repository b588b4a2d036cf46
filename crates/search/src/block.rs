//! Blocks: the bitset of one chunk of 65,536 ordinals, and the word-by-word operations a
//! query combines [`crate::postings::Postings`] with, one chunk at a time.

/// The bitset of one chunk: bit `low` is bit `low % 64` of word `low / 64`.
pub type Block = [u64; 1024];

/// The word of bit `low` in a block (masked, so indexing needs no bounds check).
#[inline(always)]
pub(crate) fn word(low: u32) -> usize {
    (low as usize >> 6) & 1023
}

#[inline(always)]
pub(crate) fn bit(low: u32) -> u64 {
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

/// The set bits of a block, ascending.
pub(crate) struct BlockLows<'a> {
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

pub(crate) fn block_lows(block: &Block) -> BlockLows<'_> {
    BlockLows {
        block,
        at: 0,
        bits: block[0],
    }
}
