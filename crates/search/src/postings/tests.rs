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

/// Sealing a complete chunk gives back its spare bytes and changes no member; the chunk
/// still takes changes afterwards.
#[test]
fn sealing_a_chunk_keeps_its_members() {
    let mut rng = Lcg(5);
    let (mut p, mut want) = build(&mut rng, 0, 2 * 65_536 + 500, 30_000);
    let before = p.heap_bytes();
    p.seal(0);
    p.seal(1);
    p.seal(9);
    assert!(p.heap_bytes() < before, "{} >= {before}", p.heap_bytes());
    check(&p, &want, &mut rng);
    for o in [3, 65_535, 70_001] {
        assert_eq!(p.insert(o), want.insert(o));
    }
    assert!(p.remove(1_000) == want.remove(&1_000));
    check(&p, &want, &mut rng);
}

/// Packed sets (sparse, near the line, and bitsets), and sets given as slices of
/// ordinals, hold their members and combine with a block as the same sets kept as
/// [`Postings`] do; neither has a member past the first chunk.
#[test]
fn packed_sets_combine_as_postings_do() {
    let mut rng = Lcg(11);
    let mut sets = Vec::new();
    for per_million in [0, 30, 1_000, 40_000, 62_000, 70_000, 300_000, 1_000_000] {
        let (p, want) = build(&mut rng, 0, 65_536, per_million);
        sets.push((p, want));
    }
    let (mut bytes, mut dense, mut ends) = (Vec::new(), Vec::new(), vec![0]);
    for (_, want) in &sets {
        let lows: Vec<u16> = want.iter().map(|&o| o as u16).collect();
        pack_set(&lows, &mut bytes, &mut dense);
        ends.push(bytes.len());
    }
    // Bitsets where a set kept as postings has one.
    let bitsets: usize = sets.iter().map(|(p, _)| dense_chunks(p)).sum();
    assert!(bitsets >= 2);
    assert_eq!(dense.len(), bitsets);
    for (i, (p, want)) in sets.iter().enumerate() {
        let got = unpack_set(&bytes[ends[i]..ends[i + 1]], &dense);
        assert_eq!(got.len(), want.len() as u64);
        assert!(
            got.lows()
                .into_iter()
                .map(u32::from)
                .eq(want.iter().copied()),
            "set {i}"
        );
        let lows = got.lows();
        let p = SetRef::from(p);
        // Packed, and as a slice of ordinals (a packed word's jobs indexed since).
        for got in [SetRef::Packed(got), SetRef::Lows(&lows)] {
            assert_eq!(got.len(), want.len() as u64);
            for key in [0, 1] {
                let base = noise(&mut rng);
                for and in [false, true] {
                    let (mut x, mut y) = (base, base);
                    if and {
                        got.and_into(key, &mut x);
                        p.and_into(key, &mut y);
                    } else {
                        got.or_into(key, &mut x);
                        p.or_into(key, &mut y);
                    }
                    assert!(x == y, "set {i} key {key} and {and}");
                }
            }
        }
    }
}
