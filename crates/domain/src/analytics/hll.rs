//! Ours, not a crate's: databases already hold sketches in this byte format, which no HLL crate reads.
//!
//! A HyperLogLog sketch of distinct 16-byte visitor hashes (precision 14: 16,384 registers,
//! standard error about 1.04/sqrt(16384) = 0.81%).
//!
//! The visitor hashes are already uniform (a SHA-256 prefix), so their first 64 bits are
//! used as the hash: the top 14 bits pick the register, the rank is one more than the
//! leading zeros of the remaining 50 bits. Two sketches merge by taking the larger of each
//! register, which gives exactly the sketch of the union.
//!
//! Stored form: a tag byte, then either a sparse list of set registers (3 bytes each:
//! index, big-endian `u16`, and rank; sorted by index) or, once more than a quarter of the
//! registers are set, the dense array of all 16,384 registers. Small sets stay small.
//!
//! The estimate uses Ertl's improved raw estimator ("New cardinality estimation algorithms
//! for HyperLogLog sketches", 2017), unbiased over the whole range without correction
//! tables, from one visitor to billions.
//!
//! Crates weighed: `hyperloglogplus` stores serde of its packed 6-bit registers and
//! estimates with HLL++ bias tables; `simple_hll` and `hyperloglockless` store their own
//! serde layouts and place values with their own hashers. None reads the bytes already in
//! `analytics_daily.sketch`: moving to one would mean rebuilding every stored sketch from
//! the visitor rows, for no gain in accuracy.

/// Index bits.
pub const PRECISION: u32 = 14;
/// Registers.
pub const REGISTERS: usize = 1 << PRECISION;
/// Largest rank: 64 - 14 hash bits left, plus one.
const MAX_RANK: u8 = (64 - PRECISION + 1) as u8;
/// Relative standard error of an estimate.
pub const STANDARD_ERROR: f64 = 1.04 / 128.0;

const TAG_SPARSE: u8 = 1;
const TAG_DENSE: u8 = 2;
/// Sparse entries kept before switching to the dense form (3 bytes each: 12 KiB at most).
const SPARSE_MAX: usize = REGISTERS / 4;

/// A HyperLogLog sketch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sketch {
    repr: Repr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    /// Set registers as `(index, rank)`, sorted by index, each index once.
    Sparse(Vec<(u16, u8)>),
    /// Every register.
    Dense(Vec<u8>),
}

impl Default for Sketch {
    fn default() -> Self {
        Sketch::new()
    }
}

/// Register index and rank of a visitor hash.
fn locate(hash: &[u8; 16]) -> (u16, u8) {
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    let x = u64::from_be_bytes(first);
    let index = (x >> (64 - PRECISION)) as u16;
    let rest = x << PRECISION;
    let rank = if rest == 0 {
        MAX_RANK
    } else {
        rest.leading_zeros() as u8 + 1
    };
    (index, rank)
}

impl Sketch {
    /// An empty sketch (sparse).
    pub fn new() -> Sketch {
        Sketch {
            repr: Repr::Sparse(Vec::new()),
        }
    }

    /// An empty sketch in the dense form, for merging many sketches.
    pub fn dense() -> Sketch {
        Sketch {
            repr: Repr::Dense(vec![0; REGISTERS]),
        }
    }

    /// Adds one visitor hash.
    pub fn insert(&mut self, hash: &[u8; 16]) {
        let (index, rank) = locate(hash);
        self.set(index, rank);
    }

    fn set(&mut self, index: u16, rank: u8) {
        match &mut self.repr {
            Repr::Dense(r) => {
                let slot = &mut r[index as usize];
                *slot = (*slot).max(rank);
            }
            Repr::Sparse(entries) => {
                match entries.binary_search_by_key(&index, |e| e.0) {
                    Ok(i) => entries[i].1 = entries[i].1.max(rank),
                    Err(i) => entries.insert(i, (index, rank)),
                }
                if entries.len() > SPARSE_MAX {
                    self.densify();
                }
            }
        }
    }

    fn densify(&mut self) {
        if let Repr::Sparse(entries) = &self.repr {
            let mut r = vec![0u8; REGISTERS];
            for &(i, rank) in entries {
                r[i as usize] = rank;
            }
            self.repr = Repr::Dense(r);
        }
    }

    /// Adds every visitor of `other`: the result is the sketch of the union.
    pub fn merge(&mut self, other: &Sketch) {
        match &other.repr {
            Repr::Sparse(entries) => {
                if let Repr::Sparse(mine) = &mut self.repr {
                    *mine = merge_sorted(mine, entries);
                    if mine.len() > SPARSE_MAX {
                        self.densify();
                    }
                } else {
                    for &(i, rank) in entries {
                        self.set(i, rank);
                    }
                }
            }
            Repr::Dense(theirs) => {
                self.densify();
                if let Repr::Dense(mine) = &mut self.repr {
                    for (a, b) in mine.iter_mut().zip(theirs) {
                        *a = (*a).max(*b);
                    }
                }
            }
        }
    }

    /// Merges a stored sketch (see [`Sketch::to_bytes`]) without decoding it first;
    /// false when the bytes are not a sketch (then nothing is merged).
    pub fn merge_bytes(&mut self, bytes: &[u8]) -> bool {
        match bytes.split_first() {
            Some((&TAG_DENSE, regs)) if regs.len() == REGISTERS => {
                self.densify();
                if let Repr::Dense(mine) = &mut self.repr {
                    for (a, b) in mine.iter_mut().zip(regs) {
                        *a = (*a).max(*b);
                    }
                }
                true
            }
            // A few entries (a quiet job's day): set them in place, without decoding.
            Some((&TAG_SPARSE, body)) if body.len() <= 3 * 16 && body.len() % 3 == 0 => {
                let entries = body
                    .chunks_exact(3)
                    .map(|c| (u16::from_be_bytes([c[0], c[1]]), c[2]));
                if !entries
                    .clone()
                    .all(|(i, rank)| (i as usize) < REGISTERS && (1..=MAX_RANK).contains(&rank))
                {
                    return false;
                }
                for (i, rank) in entries {
                    self.set(i, rank);
                }
                true
            }
            Some((&TAG_SPARSE, _)) => match Sketch::from_bytes(bytes) {
                Some(other) => {
                    self.merge(&other);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// The stored form.
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.repr {
            Repr::Sparse(entries) => {
                let mut out = Vec::with_capacity(1 + 3 * entries.len());
                out.push(TAG_SPARSE);
                for &(i, rank) in entries {
                    out.extend_from_slice(&i.to_be_bytes());
                    out.push(rank);
                }
                out
            }
            Repr::Dense(r) => {
                let mut out = Vec::with_capacity(1 + REGISTERS);
                out.push(TAG_DENSE);
                out.extend_from_slice(r);
                out
            }
        }
    }

    /// Reads the stored form; `None` when the bytes are not a valid sketch.
    pub fn from_bytes(bytes: &[u8]) -> Option<Sketch> {
        let (&tag, body) = bytes.split_first()?;
        match tag {
            TAG_DENSE if body.len() == REGISTERS && body.iter().all(|&r| r <= MAX_RANK) => {
                Some(Sketch {
                    repr: Repr::Dense(body.to_vec()),
                })
            }
            TAG_SPARSE if body.len() % 3 == 0 && body.len() / 3 <= SPARSE_MAX => {
                let mut entries = Vec::with_capacity(body.len() / 3);
                for c in body.chunks_exact(3) {
                    let i = u16::from_be_bytes([c[0], c[1]]);
                    let rank = c[2];
                    let sorted = entries.last().is_none_or(|&(prev, _)| prev < i);
                    if (i as usize) >= REGISTERS || rank == 0 || rank > MAX_RANK || !sorted {
                        return None;
                    }
                    entries.push((i, rank));
                }
                Some(Sketch {
                    repr: Repr::Sparse(entries),
                })
            }
            _ => None,
        }
    }

    /// The estimated number of distinct hashes added.
    pub fn estimate(&self) -> f64 {
        let mut counts = [0u32; MAX_RANK as usize + 1];
        match &self.repr {
            Repr::Sparse(entries) => {
                counts[0] = (REGISTERS - entries.len()) as u32;
                for &(_, rank) in entries {
                    counts[rank as usize] += 1;
                }
            }
            Repr::Dense(r) => {
                for &rank in r {
                    counts[rank as usize] += 1;
                }
            }
        }
        ertl_estimate(&counts)
    }
}

fn merge_sorted(a: &[(u16, u8)], b: &[(u16, u8)]) -> Vec<(u16, u8)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.max(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Ertl's improved raw estimator from the histogram of register values (0 to `MAX_RANK`).
fn ertl_estimate(counts: &[u32]) -> f64 {
    let m = REGISTERS as f64;
    let q = MAX_RANK as usize - 1;
    let mut z = m * tau(1.0 - f64::from(counts[q + 1]) / m);
    for k in (1..=q).rev() {
        z = 0.5 * (z + f64::from(counts[k]));
    }
    z += m * sigma(f64::from(counts[0]) / m);
    // alpha at infinity: 1 / (2 ln 2)
    m * m / (2.0 * std::f64::consts::LN_2 * z)
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic, well-mixed 16-byte values (splitmix64), standing in for visitor hashes.
    fn hashes(from: u64, to: u64) -> impl Iterator<Item = [u8; 16]> {
        (from..to).map(|i| {
            let mix = |mut z: u64| {
                z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            };
            let mut h = [0u8; 16];
            h[..8].copy_from_slice(&mix(i).to_be_bytes());
            h[8..].copy_from_slice(&mix(i ^ 0x5555).to_be_bytes());
            h
        })
    }

    fn sketch_of(from: u64, to: u64) -> Sketch {
        let mut s = Sketch::new();
        for h in hashes(from, to) {
            s.insert(&h);
        }
        s
    }

    fn assert_within_three_standard_errors(s: &Sketch, n: u64) {
        let est = s.estimate();
        let err = (est - n as f64).abs() / n as f64;
        assert!(
            err <= 3.0 * STANDARD_ERROR,
            "{n} distinct: estimate {est:.0}, error {:.3}%",
            err * 100.0
        );
    }

    #[test]
    fn estimates_are_within_three_standard_errors() {
        for n in [10_000, 100_000, 1_000_000] {
            assert_within_three_standard_errors(&sketch_of(0, n), n);
            // Another draw of hashes of the same size.
            assert_within_three_standard_errors(&sketch_of(7 * n, 8 * n), n);
        }
    }

    #[test]
    fn small_sets_are_exact_or_nearly() {
        assert_eq!(Sketch::new().estimate(), 0.0);
        assert_eq!(Sketch::dense().estimate(), 0.0);
        for n in [1, 2, 3, 10, 50, 100] {
            let est = sketch_of(0, n).estimate();
            assert!((est - n as f64).abs() <= 1.0, "{n}: {est}");
        }
        for n in [500, 1_000, 5_000] {
            let est = sketch_of(0, n).estimate();
            assert!((est - n as f64).abs() <= n as f64 * 0.01, "{n}: {est}");
        }
        // Adding the same hashes again changes nothing.
        let mut s = sketch_of(0, 100);
        for h in hashes(0, 100) {
            s.insert(&h);
        }
        assert_eq!(s, sketch_of(0, 100));
    }

    #[test]
    fn merge_is_the_sketch_of_the_union() {
        // Sparse with sparse, sparse with dense, dense with dense, in both orders.
        for (a, b, c) in [(0, 300, 600), (0, 600, 30_000), (0, 20_000, 60_000)] {
            let (left, right) = (sketch_of(a, c.min(b + 200)), sketch_of(b, c));
            let union = sketch_of(a, c);
            let mut m = left.clone();
            m.merge(&right);
            let mut n = right.clone();
            n.merge(&left);
            let mut from_bytes = Sketch::dense();
            assert!(from_bytes.merge_bytes(&left.to_bytes()));
            assert!(from_bytes.merge_bytes(&right.to_bytes()));
            let regs = |s: &Sketch| {
                let mut d = s.clone();
                d.densify();
                d
            };
            assert_eq!(regs(&m), regs(&union), "{a}..{c}");
            assert_eq!(regs(&n), regs(&union), "{a}..{c}");
            assert_eq!(regs(&from_bytes), regs(&union), "{a}..{c}");
            assert_eq!(m.estimate(), union.estimate());
        }
        // Small sparse sketches merged in place.
        let mut small = Sketch::new();
        for (from, to) in [(0, 10), (5, 15), (14, 20)] {
            assert!(small.merge_bytes(&sketch_of(from, to).to_bytes()));
        }
        assert_eq!(small, sketch_of(0, 20));
        let mut big = sketch_of(0, 60_000);
        big.merge(&sketch_of(40_000, 100_000));
        assert_within_three_standard_errors(&big, 100_000);
    }

    #[test]
    fn stored_form_round_trips_and_stays_small_for_small_sets() {
        for n in [0, 1, 100, SPARSE_MAX as u64, 50_000] {
            let s = sketch_of(0, n);
            let bytes = s.to_bytes();
            assert_eq!(Sketch::from_bytes(&bytes), Some(s.clone()), "{n}");
            assert!(bytes.len() <= 1 + REGISTERS);
        }
        assert_eq!(sketch_of(0, 1).to_bytes().len(), 4);
        assert_eq!(sketch_of(0, 100_000).to_bytes().len(), 1 + REGISTERS);
        for bad in [
            &[][..],
            &[9, 1, 2],
            &[TAG_SPARSE, 0, 1],
            &[TAG_SPARSE, 0x7f, 0, 1],
        ] {
            assert_eq!(Sketch::from_bytes(bad), None, "{bad:?}");
            assert!(!Sketch::new().merge_bytes(bad));
        }
    }
}
