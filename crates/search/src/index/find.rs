//! Lists: the jobs of a [`Query`] computed a chunk of ordinals at a time, counted, and
//! their page read newest first.

use std::sync::Arc;

use jobboard_core::Ts;

use super::{Found, OrgIndex, PREFIX_TERMS, Query, words::query_words};
use crate::{
    block::{Block, block_and, block_count, block_is_empty, block_iter_desc},
    postings::{Postings, SetRef},
};

impl OrgIndex {
    /// The page `[offset, offset + limit)` of the list `q` at `now`, and its total.
    pub fn find(&self, q: &Query<'_>, now: Ts) -> Found {
        let nothing = Found {
            ids: Vec::new(),
            total: 0,
        };
        let statuses: Vec<&Postings> = match q.statuses {
            Some(l) => l
                .iter()
                .filter_map(|s| self.status_index(s))
                .map(|i| &self.statuses[i])
                .collect(),
            None => self.statuses.iter().collect(),
        };
        if statuses.is_empty() {
            return nothing;
        }
        // Each group: a job must be in one of its sets.
        let mut groups: Vec<Vec<SetRef<'_>>> = Vec::new();
        if !q.job_types.is_empty() {
            groups.push(
                q.job_types
                    .iter()
                    .filter_map(|t| self.type_index(t))
                    .map(|i| SetRef::from(&self.types[i]))
                    .collect(),
            );
        }
        if !q.categories.is_empty() {
            groups.push(
                q.categories
                    .iter()
                    .filter_map(|c| self.category_numbers.get(c))
                    .map(|&n| SetRef::from(&self.categories[n as usize - 1]))
                    .collect(),
            );
        }
        if !q.locations.is_empty() {
            groups.push(
                self.locations
                    .iter()
                    .filter(|(l, _)| q.locations.iter().any(|want| l.contains(want.as_str())))
                    .map(|(_, p)| SetRef::from(p))
                    .collect(),
            );
        }
        if let Some(c) = q.country {
            match self.country_numbers.get(c) {
                Some(&n) => groups.push(vec![SetRef::from(&self.countries[n as usize - 1])]),
                None => return nothing,
            }
        }
        let words = query_words(q.words);
        let unions: Vec<Option<Arc<Postings>>> =
            words.iter().map(|w| self.prefix_union(w)).collect();
        for (w, union) in words.iter().zip(&unions) {
            match union {
                Some(u) => groups.push(vec![SetRef::from(&**u)]),
                None => groups.push(self.expansions(w).collect()),
            }
        }
        if groups.iter().any(Vec::is_empty) {
            return nothing;
        }
        // The smallest groups first: the bitset empties soonest.
        groups.sort_by_key(|g| g.iter().map(|p| p.len()).sum::<u64>());
        let lists_expiring = q.statuses.is_none_or(|l| l.contains(&self.names.expiring));
        let mut overdue = Postings::new();
        if lists_expiring {
            let mut due: Vec<u32> = self
                .expiring
                .range(..=(now.micros(), u32::MAX))
                .map(|&(_, o)| o)
                .collect();
            due.sort_unstable();
            for o in due {
                overdue.insert(o);
            }
        }

        let sets = Sets {
            statuses,
            remote: q.remote,
            groups,
            overdue,
            salary_min: q.salary_min,
        };
        let mut blocks = Blocks::take();
        let mut matched: Vec<(u16, Box<Block>)> = Vec::new();
        let top = (self.keys.len() as u64).saturating_sub(1) >> 16;
        let mut tmp = blocks.get();
        for key in 0..=top as u16 {
            if self.keys.is_empty() {
                break;
            }
            let mut acc = blocks.get();
            if self.matches(key, &sets, &mut acc, &mut tmp) {
                matched.push((key, acc));
            } else {
                blocks.put(acc);
            }
        }

        // Sticky jobs first, then the others.
        let mut ids = Vec::new();
        let mut items = 0i64;
        let mut skip = q.offset.max(0) as usize;
        let mut want = q.limit.max(0) as usize;
        let sticky_counts: Vec<usize> = matched
            .iter()
            .map(|(key, acc)| {
                tmp.copy_from_slice(&acc[..]);
                self.sticky.and_into(*key, &mut tmp);
                block_count(&tmp) as usize
            })
            .collect();
        for sticky in [true, false] {
            let counts: Vec<usize> = matched
                .iter()
                .zip(&sticky_counts)
                .map(|((_, acc), s)| {
                    if sticky {
                        *s
                    } else {
                        block_count(acc) as usize - s
                    }
                })
                .collect();
            let n: usize = counts.iter().sum();
            items += n as i64;
            if want > 0 && skip < n {
                let page = self.page(&matched, &counts, sticky, skip, want, &mut tmp);
                want -= page.len();
                ids.extend(page.into_iter().map(|o| self.key_of(o).1));
            }
            skip = skip.saturating_sub(n);
        }
        blocks.put(tmp);
        for (_, b) in matched {
            blocks.put(b);
        }
        blocks.give_back();
        Found { ids, total: items }
    }

    /// Computes into `acc` the members of chunk `key` of a list; false when there are
    /// none.
    fn matches(&self, key: u16, sets: &Sets<'_>, acc: &mut Block, tmp: &mut Block) -> bool {
        acc.fill(0);
        for s in &sets.statuses {
            s.or_into(key, acc);
        }
        if block_is_empty(acc) {
            return false;
        }
        match sets.remote {
            Some(true) => self.remote.and_into(key, acc),
            Some(false) => self.remote.andnot_into(key, acc),
            None => {}
        }
        for g in &sets.groups {
            if let [one] = g.as_slice() {
                one.and_into(key, acc);
            } else {
                tmp.fill(0);
                for p in g {
                    p.or_into(key, tmp);
                }
                block_and(acc, tmp);
            }
            if block_is_empty(acc) {
                return false;
            }
        }
        sets.overdue.andnot_into(key, acc);
        if let Some(min) = sets.salary_min {
            // A NaN (no salary) is never at least `min`.
            let base = (key as usize) << 16;
            for (at, w) in acc.iter_mut().enumerate() {
                let mut bits = *w;
                while bits != 0 {
                    let t = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let o = base + at * 64 + t;
                    let reaches = self.salaries.get(o as u32) >= min;
                    if !reaches {
                        *w &= !(1 << t);
                    }
                }
            }
        }
        !block_is_empty(acc)
    }

    /// One part of a list's matches (its sticky or its other jobs) in chunk `key`.
    fn part_of(&self, key: u16, acc: &Block, sticky: bool, out: &mut Block) {
        out.copy_from_slice(&acc[..]);
        if sticky {
            self.sticky.and_into(key, out);
        } else {
            self.sticky.andnot_into(key, out);
        }
    }

    /// The sets of the words `w` begins (a packed word indexed again since has two).
    fn expansions<'a>(&'a self, w: &'a str) -> impl Iterator<Item = SetRef<'a>> + 'a {
        let kept = self
            .terms
            .range::<str, _>((std::ops::Bound::Included(w), std::ops::Bound::Unbounded))
            .take_while(move |(t, _)| t.starts_with(w))
            .map(|(_, &t)| SetRef::from(&self.postings[t as usize]));
        self.packed.expansions(w).chain(kept)
    }

    /// The union of the sets of the words `w` begins, when they are many (kept for the
    /// next lists, within [`OrgIndex::prefix_bytes`]); `None` for a few, which a list
    /// combines itself.
    fn prefix_union(&self, w: &str) -> Option<Arc<Postings>> {
        // Fewer words than that: `None`.
        self.expansions(w).nth(PREFIX_TERMS - 1)?;
        let mut cache = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
        cache.tick += 1;
        let tick = cache.tick;
        if let Some((u, used)) = cache.entries.get_mut(w) {
            *used = tick;
            return Some(u.clone());
        }
        drop(cache);
        let sets: Vec<SetRef<'_>> = self.expansions(w).collect();
        let mut union = Postings::new();
        let mut b: Box<Block> = Box::new([0; 1024]);
        let top = (self.keys.len() as u64).saturating_sub(1) >> 16;
        for key in 0..=top as u16 {
            b.fill(0);
            for p in &sets {
                p.or_into(key, &mut b);
            }
            union.push_block(key, &b);
        }
        let union = Arc::new(union);
        let limit = self.prefix_bytes();
        let mut cache = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((old, _)) = cache.entries.insert(w.into(), (union.clone(), tick)) {
            cache.bytes -= old.heap_bytes();
        }
        cache.bytes += union.heap_bytes();
        while cache.bytes > limit && cache.entries.len() > 1 {
            let Some(oldest) = cache
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((u, _)) = cache.entries.remove(&oldest) {
                cache.bytes -= u.heap_bytes();
            }
        }
        Some(union)
    }

    /// Bytes the unions of prefixes may take: about 8 a job.
    fn prefix_bytes(&self) -> usize {
        (self.keys.len() * 8).max(1 << 20)
    }

    /// Ordinals `[skip, skip + want)` of a part of a list (its sticky jobs or the others)
    /// in list order (newest first); `counts` has the part's members per matched chunk.
    fn page(
        &self,
        matched: &[(u16, Box<Block>)],
        counts: &[usize],
        sticky: bool,
        skip: usize,
        want: usize,
        part: &mut Block,
    ) -> Vec<u32> {
        let ordinal = |key: u16, low: u16| (u32::from(key) << 16) | u32::from(low);
        let misplaced = !self.misplaced.is_empty()
            && matched.iter().any(|(key, acc)| {
                self.part_of(*key, acc, sticky, part);
                self.misplaced.and_into(*key, part);
                !block_is_empty(part)
            });
        if self.displacement == 0 && !misplaced {
            // Ordinals are in list order: skip whole chunks by their counts.
            let mut skip = skip;
            let mut out = Vec::with_capacity(want);
            for ((key, acc), &c) in matched.iter().zip(counts).rev() {
                if skip >= c {
                    skip -= c;
                    continue;
                }
                self.part_of(*key, acc, sticky, part);
                for low in block_iter_desc(part) {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    out.push(ordinal(*key, low));
                    if out.len() == want {
                        return out;
                    }
                }
            }
            return out;
        }
        // In place, no job is more than `displacement` ordinals from its rank: once
        // `skip + want` are taken, every job of the page is above the last one taken
        // less the displacement. The misplaced ones are all taken, then all sorted.
        let need = skip + want;
        let mut taken: Vec<u32> = Vec::new();
        let mut floor: Option<i64> = None;
        'chunks: for (key, acc) in matched.iter().rev() {
            self.part_of(*key, acc, sticky, part);
            self.misplaced.andnot_into(*key, part);
            for low in block_iter_desc(part) {
                let o = ordinal(*key, low);
                if floor.is_some_and(|f| i64::from(o) <= f) {
                    break 'chunks;
                }
                taken.push(o);
                if floor.is_none() && taken.len() >= need {
                    floor = Some(i64::from(o) - self.displacement as i64);
                }
            }
        }
        if misplaced {
            for (key, acc) in matched {
                self.part_of(*key, acc, sticky, part);
                self.misplaced.and_into(*key, part);
                taken.extend(block_iter_desc(part).map(|low| ordinal(*key, low)));
            }
        }
        taken.sort_unstable_by_key(|o| std::cmp::Reverse(self.key_of(*o)));
        taken.into_iter().skip(skip).take(want).collect()
    }
}

/// What a job must be in to be listed: one of the statuses, the remoteness asked for,
/// one set of each group (filters, words), and not overdue.
struct Sets<'a> {
    statuses: Vec<&'a Postings>,
    remote: Option<bool>,
    groups: Vec<Vec<SetRef<'a>>>,
    overdue: Postings,
    /// The least salary, checked job by job.
    salary_min: Option<f64>,
}

/// Bitsets of chunks, kept per thread between lists (a list at a million jobs needs up
/// to 18 of 8 KiB; allocating them for every list made memory grow under load).
struct Blocks(Vec<Box<Block>>);

thread_local! {
    static BLOCKS: std::cell::RefCell<Vec<Box<Block>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Blocks {
    fn take() -> Blocks {
        Blocks(BLOCKS.with(|b| std::mem::take(&mut *b.borrow_mut())))
    }
    fn get(&mut self) -> Box<Block> {
        self.0.pop().unwrap_or_else(|| Box::new([0; 1024]))
    }
    fn put(&mut self, b: Box<Block>) {
        self.0.push(b);
    }
    /// Keeps at most 32 for the thread's next list.
    fn give_back(mut self) {
        self.0.truncate(32);
        BLOCKS.with(|b| *b.borrow_mut() = std::mem::take(&mut self.0));
    }
}
