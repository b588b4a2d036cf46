//! An organization's jobs as an in-memory search index: what answers a search or a
//! filtered list in microseconds, whatever the words and however many jobs match.
//!
//! Every job has an *ordinal*, its place in list order (oldest first, by `created_at`
//! then id), and every word, status, job type, category, location, stickiness and
//! remoteness has the set of ordinals that have it ([`Postings`]). A list is computed
//! 65,536 ordinals at a time as a bitset: the listed statuses, each filter (any of its
//! values), and each search word (any word it is a prefix of), intersected, less the
//! active jobs already past `expires_at`. The total is the number of bits set; a page is
//! read from the highest ordinals down (newest first), sticky jobs first.
//!
//! Jobs mostly arrive in list order. One that arrives late (created earlier, committed
//! after newer ones) is still given the next ordinal: the index records how far out of
//! place any job can be (`displacement`) and sorts a page from the few extra candidates
//! that allows. One that arrives too late for that, or whose words changed (its words are
//! not kept, so it is indexed again under a new ordinal, the old one forgotten), is
//! *misplaced*: kept in a small set that pages take into account one by one. When that
//! set or the forgotten ordinals grow large, the owner builds the index again.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::{Arc, Mutex},
};

use uuid::Uuid;

use jobboard_search::postings::{
    Block, Postings, block_and, block_count, block_is_empty, block_iter_desc,
};

use super::model::{JobStatus, JobType, ListFilter, Total};
use crate::Ts;

/// A job's place in list order: `created_at` (microseconds) and id.
pub(crate) type Key = (i64, Uuid);

/// How many of the newest ordinals a late job may land behind and still count as in
/// place; beyond that it is misplaced.
const WINDOW: usize = 4096;

/// A search word that begins at least this many words is answered from the union of
/// their sets, made once and kept (see [`OrgIndex::prefix_union`]).
const PREFIX_TERMS: usize = 8;

/// A job as the index reads it from the database.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct Doc {
    pub id: Uuid,
    pub created_at: Ts,
    pub status: String,
    pub is_sticky: bool,
    pub is_remote: bool,
    pub job_type: Option<String>,
    pub category_id: Option<Uuid>,
    pub location: Option<String>,
    pub expires_at: Option<Ts>,
    pub title: String,
    pub company_name: String,
    pub description_text: String,
}

impl Doc {
    /// The columns of [`Doc`], for a `SELECT` from `jobs` (aliased `j`).
    pub const COLUMNS: &'static str = "j.id, j.created_at, j.status, j.is_sticky, j.is_remote, \
        j.job_type, j.category_id, j.location, j.expires_at, j.title, j.company_name, \
        j.description_text";

    fn key(&self) -> Key {
        (self.created_at.micros(), self.id)
    }
}

/// The words of `text` as the index and the searches see them: runs of letters and
/// digits, lower-cased, with the accents of Latin letters taken off (`Café` is `cafe`).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_ascii() {
                word.push(c.to_ascii_lowercase());
            } else if crate::text::is_latin(c) {
                match deunicode::deunicode_char(c) {
                    Some(s) => word.extend(
                        s.chars()
                            .filter(char::is_ascii_alphanumeric)
                            .map(|c| c.to_ascii_lowercase()),
                    ),
                    None => word.extend(c.to_lowercase()),
                }
            } else {
                word.extend(c.to_lowercase());
            }
        } else if !word.is_empty() {
            f(&word);
            word.clear();
        }
    }
    if !word.is_empty() {
        f(&word);
    }
}

/// The words of a job (title, company name, description) into `words`, sorted (a word
/// may repeat): returns how many. The strings of `words` are reused from call to call,
/// so a build allocates nothing per word.
fn doc_words(doc: &Doc, words: &mut Vec<String>) -> usize {
    let mut n = 0;
    for text in [&doc.title, &doc.company_name, &doc.description_text] {
        for_each_word(text, |w| {
            match words.get_mut(n) {
                Some(s) => {
                    s.clear();
                    s.push_str(w);
                }
                None => words.push(w.to_string()),
            }
            n += 1;
        });
    }
    words[..n].sort_unstable();
    n
}

/// The words of a search, in the index's form.
pub(crate) fn query_words(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        for_each_word(w, |t| out.push(t.to_string()));
    }
    out.sort();
    out.dedup();
    out
}

// The attributes of an ordinal, one byte: status (0 = no job), job type, remote, sticky.
const STATUS_MASK: u8 = 0b0000_0111;
const TYPE_SHIFT: u8 = 3;
const TYPE_MASK: u8 = 0b0011_1000;
const REMOTE: u8 = 0b0100_0000;
const STICKY: u8 = 0b1000_0000;

fn status_index(s: &str) -> Option<usize> {
    JobStatus::ALL.iter().position(|x| *x == s)
}

fn type_index(s: &str) -> Option<usize> {
    JobType::ALL.iter().position(|x| *x == s)
}

/// What a build keeps between jobs: the words of the job at hand, the term map, and
/// each word's ordinals in the chunk being read.
#[derive(Debug, Default)]
pub(crate) struct Build {
    words: Vec<String>,
    terms: HashMap<Box<str>, u32>,
    pending: Vec<Vec<u16>>,
    chunk: Option<u16>,
}

/// Why an organization's jobs cannot be indexed: more distinct categories or locations
/// than an ordinal's attributes can name, more jobs than ordinals, or a build's jobs not
/// in list order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLarge;

/// What a list found: the ids of the page's jobs in list order, and the exact total.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub ids: Vec<Uuid>,
    pub total: Total,
}

/// One organization's jobs, indexed.
#[derive(Debug, Default)]
pub(crate) struct OrgIndex {
    /// By ordinal: the job's key, or for a misplaced ordinal the largest key in place
    /// when it came (so that the keys stay in order within the displacement).
    keys: Vec<Key>,
    attrs: Vec<u8>,
    /// By ordinal: the category (0: none, else its number + 1).
    cats: Vec<u16>,
    /// By ordinal: the location (0: none, else its number + 1).
    locs: Vec<u32>,
    /// Every word, and the number of its postings.
    terms: BTreeMap<Box<str>, u32>,
    postings: Vec<Postings>,
    statuses: [Postings; 4],
    types: [Postings; 6],
    remote: Postings,
    sticky: Postings,
    categories: Vec<Postings>,
    category_numbers: HashMap<Uuid, u16>,
    /// Locations in lower case, with their jobs.
    locations: Vec<(Box<str>, Postings)>,
    location_numbers: HashMap<Box<str>, u32>,
    /// Active jobs with an expiry: `(expires_at, ordinal)`, and each one's expiry.
    expiring: BTreeSet<(i64, u32)>,
    expiry_of: HashMap<u32, i64>,
    /// Misplaced ordinals, their jobs' ids and real keys.
    misplaced: Postings,
    misplaced_ids: HashMap<Uuid, u32>,
    misplaced_keys: HashMap<u32, Key>,
    /// No job in place is more than this many ordinals out of list order.
    displacement: usize,
    /// The largest key in place, and the largest among the ordinals below `settled`
    /// (those older than the last [`WINDOW`]).
    max_key: Option<Key>,
    settled: usize,
    settled_max: Option<Key>,
    live: usize,
    forgotten: usize,
    /// Unions of the words that begin with a prefix that begins many, by prefix.
    prefixes: Mutex<Prefixes>,
}

/// Unions of prefixes' words, with their last use and their bytes in all.
#[derive(Debug, Default)]
struct Prefixes {
    entries: HashMap<Box<str>, (Arc<Postings>, u64)>,
    bytes: usize,
    tick: u64,
}

impl OrgIndex {
    pub fn new() -> OrgIndex {
        OrgIndex::default()
    }

    /// The number of jobs indexed.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when the index should be built again: many misplaced ordinals (every page
    /// that matches them sorts them) or many forgotten ones (their words' sets still
    /// hold them).
    pub fn worn(&self) -> bool {
        self.misplaced.len() as usize > 1_000 + self.live / 100
            || self.forgotten > 1_000 + self.live / 10
    }

    /// Adds a job not yet in the index, or brings one in line with `doc`; `words_changed`
    /// says whether its title, company name or description may differ from what was
    /// indexed.
    pub fn put(&mut self, doc: &Doc, words_changed: bool) -> Result<(), TooLarge> {
        match self.lookup(doc.key()) {
            Some(o) if !words_changed => self.set_attributes(o, doc),
            Some(o) => {
                self.forget(o);
                self.add(doc, true)
            }
            None => self.add(doc, false),
        }
    }

    /// Takes the job with this key out of the index (nothing when it is not in it).
    pub fn remove(&mut self, key: Key) {
        if let Some(o) = self.lookup(key) {
            self.forget(o);
        }
    }

    /// The live ordinal of the job with this key.
    fn lookup(&self, key: Key) -> Option<u32> {
        if let Some(&o) = self.misplaced_ids.get(&key.1)
            && self.misplaced_keys.get(&o) == Some(&key)
        {
            return Some(o);
        }
        // In-place keys are in order to within the displacement.
        let p = self.keys.partition_point(|k| *k < key);
        let lo = p.saturating_sub(self.displacement + 1);
        let hi = (p + self.displacement + 2).min(self.keys.len());
        (lo..hi).map(|o| o as u32).find(|&o| {
            self.keys[o as usize] == key && self.is_live(o) && !self.misplaced.contains(o)
        })
    }

    fn is_live(&self, o: u32) -> bool {
        self.attrs[o as usize] & STATUS_MASK != 0
    }

    /// Gives `doc` the next ordinal. `misplace`: put it among the misplaced whatever its
    /// key (a job indexed again keeps its old key, so it is out of place by nature).
    fn add(&mut self, doc: &Doc, misplace: bool) -> Result<(), TooLarge> {
        let n = self.keys.len();
        let o = u32::try_from(n).map_err(|_| TooLarge)?;
        if o == u32::MAX {
            return Err(TooLarge);
        }
        let key = doc.key();
        let in_place = !misplace
            && match self.max_key {
                None => true,
                Some(m) if key > m => true,
                Some(_) if self.settled_max.is_some_and(|s| key < s) => false,
                Some(_) => {
                    // The oldest ordinal in the window that is newer than this job.
                    let newer = (self.settled..n)
                        .find(|&i| self.keys[i] > key && !self.misplaced.contains(i as u32));
                    if let Some(i) = newer {
                        self.displacement = self.displacement.max(n - i + 1);
                    }
                    true
                }
            };
        let max = self.max_key.map_or(key, |m| m.max(key));
        if in_place {
            self.keys.push(key);
            self.max_key = Some(max);
        } else {
            self.keys.push(self.max_key.unwrap_or(key));
            self.misplaced.insert(o);
            self.misplaced_ids.insert(doc.id, o);
            self.misplaced_keys.insert(o, key);
        }
        self.attach(o, doc)?;
        self.index_words(o, doc);
        Ok(())
    }

    /// Gives ordinal `o`, whose key was just pushed, its attributes from `doc`.
    fn attach(&mut self, o: u32, doc: &Doc) -> Result<(), TooLarge> {
        self.attrs.push(0);
        self.cats.push(0);
        self.locs.push(0);
        self.settle();
        self.set_attributes(o, doc)
    }

    /// Moves `settled` up to the window's start, folding the keys it passes into
    /// `settled_max` (misplaced keys are the largest in place when they came: no harm).
    fn settle(&mut self) {
        let target = self.keys.len().saturating_sub(WINDOW);
        while self.settled < target {
            let k = self.keys[self.settled];
            self.settled_max = Some(self.settled_max.map_or(k, |m| m.max(k)));
            self.settled += 1;
        }
    }

    fn index_words(&mut self, o: u32, doc: &Doc) {
        let mut buf = Vec::new();
        let n = doc_words(doc, &mut buf);
        let words = &buf[..n];
        for (i, w) in words.iter().enumerate() {
            if i > 0 && *w == words[i - 1] {
                continue;
            }
            let w = w.clone();
            self.add_to_prefixes(&w, o);
            let t = match self.terms.get(w.as_str()) {
                Some(&t) => t,
                None => {
                    let t = self.postings.len() as u32;
                    self.postings.push(Postings::new());
                    self.terms.insert(w.into_boxed_str(), t);
                    t
                }
            };
            self.postings[t as usize].insert(o);
        }
    }

    /// Adds ordinal `o`, which has word `w`, to the kept unions of the prefixes of `w`.
    fn add_to_prefixes(&mut self, w: &str, o: u32) {
        let cache = self.prefixes.get_mut().unwrap_or_else(|e| e.into_inner());
        if cache.entries.is_empty() {
            return;
        }
        for (end, _) in w.char_indices().skip(1).chain([(w.len(), ' ')]) {
            if let Some((u, _)) = cache.entries.get_mut(&w[..end]) {
                let before = u.heap_bytes();
                let u = Arc::make_mut(u);
                u.insert(o);
                cache.bytes = cache.bytes + u.heap_bytes() - before;
            }
        }
    }

    /// Adds a job during a build (jobs in list order): its words go through the build's
    /// term map (hashing is faster than the ordered map for a million jobs) and are
    /// gathered per chunk of ordinals, each word's chunk stored once complete.
    pub fn add_built(&mut self, doc: &Doc, build: &mut Build) -> Result<(), TooLarge> {
        let n = self.keys.len();
        let o = u32::try_from(n).map_err(|_| TooLarge)?;
        let key = doc.key();
        if self.max_key.is_some_and(|m| key <= m) {
            // A build reads in list order (keys are distinct): anything else is refused.
            return Err(TooLarge);
        }
        let chunk = (o >> 16) as u16;
        if build.chunk != Some(chunk) {
            self.flush(build);
            build.chunk = Some(chunk);
        }
        self.keys.push(key);
        self.max_key = Some(key);
        self.attach(o, doc)?;
        let n = doc_words(doc, &mut build.words);
        let words = &build.words[..n];
        for i in 0..words.len() {
            if i > 0 && words[i] == words[i - 1] {
                continue;
            }
            let w = words[i].as_str();
            let t = match build.terms.get(w) {
                Some(&t) => t,
                None => {
                    let t = self.postings.len() as u32;
                    self.postings.push(Postings::new());
                    build.pending.push(Vec::new());
                    build.terms.insert(w.into(), t);
                    t
                }
            };
            build.pending[t as usize].push(o as u16);
        }
        Ok(())
    }

    /// Stores the chunk of ordinals the build has gathered.
    fn flush(&mut self, build: &mut Build) {
        let Some(chunk) = build.chunk.take() else {
            return;
        };
        for (t, lows) in build.pending.iter_mut().enumerate() {
            self.postings[t].push_chunk(chunk, lows);
            lows.clear();
        }
    }

    /// Reserves room for `n` more jobs (a build that knows how many are coming).
    pub fn reserve(&mut self, n: usize) {
        self.keys.reserve_exact(n);
        self.attrs.reserve_exact(n);
        self.cats.reserve_exact(n);
        self.locs.reserve_exact(n);
    }

    /// Ends a build made with [`OrgIndex::add_built`]: stores its last chunk, takes its
    /// term map, and gives back the memory the growing lists kept in reserve.
    pub fn finish_build(&mut self, mut build: Build) {
        self.flush(&mut build);
        self.terms.extend(build.terms);
        for p in &mut self.postings {
            p.shrink();
        }
        self.keys.shrink_to_fit();
        self.attrs.shrink_to_fit();
        self.cats.shrink_to_fit();
        self.locs.shrink_to_fit();
    }

    /// Sets the listed attributes of ordinal `o` (live or not) to those of `doc`.
    fn set_attributes(&mut self, o: u32, doc: &Doc) -> Result<(), TooLarge> {
        let status = status_index(&doc.status).ok_or(TooLarge)?;
        let category = match doc.category_id {
            None => 0,
            Some(c) => match self.category_numbers.get(&c) {
                Some(&n) => n,
                None => {
                    let n = u16::try_from(self.categories.len() + 1).map_err(|_| TooLarge)?;
                    self.categories.push(Postings::new());
                    self.category_numbers.insert(c, n);
                    n
                }
            },
        };
        let location = match &doc.location {
            None => 0,
            Some(l) => {
                let lower = l.to_lowercase();
                match self.location_numbers.get(lower.as_str()) {
                    Some(&n) => n,
                    None => {
                        let n = u32::try_from(self.locations.len() + 1).map_err(|_| TooLarge)?;
                        let lower = lower.into_boxed_str();
                        self.locations.push((lower.clone(), Postings::new()));
                        self.location_numbers.insert(lower, n);
                        n
                    }
                }
            }
        };
        self.clear_attributes(o);
        let mut a = (status + 1) as u8;
        if let Some(t) = doc.job_type.as_deref().and_then(type_index) {
            a |= ((t + 1) as u8) << TYPE_SHIFT;
            self.types[t].insert(o);
        }
        if doc.is_remote {
            a |= REMOTE;
            self.remote.insert(o);
        }
        if doc.is_sticky {
            a |= STICKY;
            self.sticky.insert(o);
        }
        self.statuses[status].insert(o);
        if category != 0 {
            self.categories[category as usize - 1].insert(o);
        }
        if location != 0 {
            self.locations[location as usize - 1].1.insert(o);
        }
        if let (Some(e), true) = (doc.expires_at, doc.status == JobStatus::Active.as_str()) {
            self.expiring.insert((e.micros(), o));
            self.expiry_of.insert(o, e.micros());
        }
        self.attrs[o as usize] = a;
        self.cats[o as usize] = category;
        self.locs[o as usize] = location;
        self.live += 1;
        Ok(())
    }

    /// Takes ordinal `o` out of every attribute set (its word sets keep it: harmless,
    /// since a list always intersects with the statuses).
    fn clear_attributes(&mut self, o: u32) {
        let a = self.attrs[o as usize];
        if a & STATUS_MASK == 0 {
            return;
        }
        self.statuses[(a & STATUS_MASK) as usize - 1].remove(o);
        let t = (a & TYPE_MASK) >> TYPE_SHIFT;
        if t != 0 {
            self.types[t as usize - 1].remove(o);
        }
        if a & REMOTE != 0 {
            self.remote.remove(o);
        }
        if a & STICKY != 0 {
            self.sticky.remove(o);
        }
        let c = self.cats[o as usize];
        if c != 0 {
            self.categories[c as usize - 1].remove(o);
        }
        let l = self.locs[o as usize];
        if l != 0 {
            self.locations[l as usize - 1].1.remove(o);
        }
        if let Some(e) = self.expiry_of.remove(&o) {
            self.expiring.remove(&(e, o));
        }
        self.attrs[o as usize] = 0;
        self.cats[o as usize] = 0;
        self.locs[o as usize] = 0;
        self.live -= 1;
    }

    /// Forgets ordinal `o`: it is in no list from now on.
    fn forget(&mut self, o: u32) {
        self.clear_attributes(o);
        if self.misplaced.remove(o)
            && let Some(k) = self.misplaced_keys.remove(&o)
        {
            self.misplaced_ids.remove(&k.1);
        }
        self.forgotten += 1;
    }

    /// Bytes this index holds on the heap (approximately: the sets exactly, the maps by
    /// their entries).
    pub fn heap_bytes(&self) -> usize {
        let prefixes = self
            .prefixes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .bytes;
        let sets: usize = self
            .postings
            .iter()
            .chain(&self.statuses)
            .chain(&self.types)
            .chain([&self.remote, &self.sticky, &self.misplaced])
            .chain(&self.categories)
            .chain(self.locations.iter().map(|(_, p)| p))
            .map(Postings::heap_bytes)
            .sum();
        let words: usize = self.terms.keys().map(|k| k.len() + 40).sum();
        let per_ordinal = self.keys.capacity() * std::mem::size_of::<Key>()
            + self.attrs.capacity()
            + self.cats.capacity() * 2
            + self.locs.capacity() * 4;
        let maps = (self.expiring.len() + self.expiry_of.len()) * 32
            + (self.misplaced_ids.len() + self.misplaced_keys.len()) * 48
            + self
                .locations
                .iter()
                .map(|(l, _)| 2 * l.len() + 64)
                .sum::<usize>()
            + self.categories.len() * 64;
        sets + prefixes
            + words
            + per_ordinal
            + maps
            + self.postings.capacity() * std::mem::size_of::<Postings>()
    }

    /// The page `[offset, offset + limit)` of the list `f` at `now`, and its total.
    pub fn find(
        &self,
        f: &ListFilter,
        words: &[String],
        limit: i64,
        offset: i64,
        now: Ts,
    ) -> Found {
        let nothing = Found {
            ids: Vec::new(),
            total: Total { items: 0 },
        };
        let statuses: Vec<&Postings> = match &f.statuses {
            Some(l) => l
                .iter()
                .filter_map(|s| status_index(s.as_str()))
                .map(|i| &self.statuses[i])
                .collect(),
            None => self.statuses.iter().collect(),
        };
        if statuses.is_empty() {
            return nothing;
        }
        // Each group: a job must be in one of its sets.
        let mut groups: Vec<Vec<&Postings>> = Vec::new();
        if !f.job_types.is_empty() {
            groups.push(
                f.job_types
                    .iter()
                    .filter_map(|t| type_index(t.as_str()))
                    .map(|i| &self.types[i])
                    .collect(),
            );
        }
        if !f.categories.is_empty() {
            groups.push(
                f.categories
                    .iter()
                    .filter_map(|c| self.category_numbers.get(c))
                    .map(|&n| &self.categories[n as usize - 1])
                    .collect(),
            );
        }
        if !f.locations.is_empty() {
            groups.push(
                self.locations
                    .iter()
                    .filter(|(l, _)| f.locations.iter().any(|want| l.contains(want.as_str())))
                    .map(|(_, p)| p)
                    .collect(),
            );
        }
        let unions: Vec<Option<Arc<Postings>>> =
            words.iter().map(|w| self.prefix_union(w)).collect();
        for (w, union) in words.iter().zip(&unions) {
            match union {
                Some(u) => groups.push(vec![&**u]),
                None => groups.push(self.expansions(w).collect()),
            }
        }
        if groups.iter().any(Vec::is_empty) {
            return nothing;
        }
        // The smallest groups first: the bitset empties soonest.
        groups.sort_by_key(|g| g.iter().map(|p| p.len()).sum::<u64>());
        let lists_active = f
            .statuses
            .as_ref()
            .is_none_or(|l| l.contains(&JobStatus::Active));
        let mut overdue = Postings::new();
        if lists_active {
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
            remote: f.is_remote,
            groups,
            overdue,
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
        let mut skip = offset.max(0) as usize;
        let mut want = limit.max(0) as usize;
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
        Found {
            ids,
            total: Total { items },
        }
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

    /// The sets of the words `w` begins.
    fn expansions<'a>(&'a self, w: &'a str) -> impl Iterator<Item = &'a Postings> + 'a {
        self.terms
            .range::<str, _>((std::ops::Bound::Included(w), std::ops::Bound::Unbounded))
            .take_while(move |(t, _)| t.starts_with(w))
            .map(|(_, &t)| &self.postings[t as usize])
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
        let sets: Vec<&Postings> = self.expansions(w).collect();
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

    /// The real key of ordinal `o`.
    fn key_of(&self, o: u32) -> Key {
        match self.misplaced_keys.get(&o) {
            Some(k) => *k,
            None => self.keys[o as usize],
        }
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
    groups: Vec<Vec<&'a Postings>>,
    overdue: Postings,
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use uuid::Uuid;

    use super::{Build, Doc, OrgIndex, for_each_word, query_words};
    use crate::{
        Ts,
        jobs::model::{JobStatus, JobType, ListFilter},
    };

    /// A small deterministic generator.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
    }

    /// Words, some prefixes of others, and twelve that begin with `ka` (a prefix of
    /// many words: its union is kept, and must follow every change).
    const WORDS: [&str; 22] = [
        "rust",
        "rustacean",
        "python",
        "data",
        "database",
        "nurse",
        "night",
        "nightly",
        "chef",
        "Café",
        "ka0",
        "ka1",
        "ka2",
        "ka3",
        "ka4",
        "ka5",
        "ka6",
        "ka7",
        "ka8",
        "ka9",
        "kab",
        "kac",
    ];
    const PLACES: [&str; 4] = ["Berlin", "Paris", "New York", "Berlingen"];

    fn doc(g: &mut Gen, id: Uuid, created: i64, cats: &[Uuid]) -> Doc {
        let mut words = |n: usize| -> String {
            (0..n)
                .map(|_| WORDS[g.below(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let title = words(2);
        let description_text = words(4);
        Doc {
            id,
            created_at: Ts::from_micros(created),
            status: JobStatus::ALL[g.below(4)].to_string(),
            is_sticky: g.chance(10),
            is_remote: g.chance(30),
            job_type: g.chance(80).then(|| JobType::ALL[g.below(6)].to_string()),
            category_id: g.chance(70).then(|| cats[g.below(cats.len())]),
            location: g
                .chance(80)
                .then(|| PLACES[g.below(PLACES.len())].to_string()),
            expires_at: g.chance(30).then(|| Ts::from_micros(g.below(2_000) as i64)),
            title,
            company_name: "Acme".into(),
            description_text,
        }
    }

    fn words_of(d: &Doc) -> Vec<String> {
        let mut out = Vec::new();
        for t in [&d.title, &d.company_name, &d.description_text] {
            for_each_word(t, |w| out.push(w.to_string()));
        }
        out
    }

    /// The list by brute force: filter, sort (sticky first, newest first), count.
    fn reference(docs: &HashMap<Uuid, Doc>, f: &ListFilter, now: i64) -> Vec<Uuid> {
        let words = query_words(&f.search_words);
        let mut hits: Vec<&Doc> = docs
            .values()
            .filter(|d| {
                f.statuses
                    .as_ref()
                    .is_none_or(|l| l.iter().any(|s| s.as_str() == d.status))
                    && !(d.status == "active" && d.expires_at.is_some_and(|e| e.micros() <= now))
                    && (f.job_types.is_empty()
                        || f.job_types
                            .iter()
                            .any(|t| Some(t.as_str()) == d.job_type.as_deref()))
                    && (f.categories.is_empty()
                        || f.categories.iter().any(|c| Some(*c) == d.category_id))
                    && (f.locations.is_empty()
                        || d.location.as_ref().is_some_and(|l| {
                            f.locations
                                .iter()
                                .any(|w| l.to_lowercase().contains(w.as_str()))
                        }))
                    && f.is_remote.is_none_or(|r| r == d.is_remote)
                    && words
                        .iter()
                        .all(|w| words_of(d).iter().any(|t| t.starts_with(w.as_str())))
            })
            .collect();
        hits.sort_by(|a, b| {
            (b.is_sticky, b.created_at.micros(), b.id).cmp(&(
                a.is_sticky,
                a.created_at.micros(),
                a.id,
            ))
        });
        hits.into_iter().map(|d| d.id).collect()
    }

    fn filter(g: &mut Gen, cats: &[Uuid]) -> ListFilter {
        let mut f = ListFilter::default();
        if g.chance(70) {
            f.search_words = (0..1 + g.below(2))
                .map(|_| {
                    let w = WORDS[g.below(WORDS.len())].to_lowercase();
                    let cut = 1 + g.below(w.len());
                    w.chars().take(cut).collect()
                })
                .collect();
        }
        if g.chance(30) {
            f.job_types = (0..1 + g.below(2))
                .map(|_| JobType::parse(JobType::ALL[g.below(6)]).unwrap())
                .collect();
        }
        if g.chance(20) {
            f.categories = vec![cats[g.below(cats.len())]];
        }
        if g.chance(25) {
            f.locations = vec![["berl", "york", "paris", "x"][g.below(4)].to_string()];
        }
        if g.chance(25) {
            f.is_remote = Some(g.chance(50));
        }
        f.statuses = match g.below(3) {
            0 => None,
            1 => Some(vec![JobStatus::Active]),
            _ => Some(vec![JobStatus::Pending, JobStatus::Draft]),
        };
        f
    }

    fn check(index: &OrgIndex, docs: &HashMap<Uuid, Doc>, g: &mut Gen, cats: &[Uuid]) {
        for _ in 0..60 {
            let f = filter(g, cats);
            let now = g.below(2_000) as i64;
            let want = reference(docs, &f, now);
            let limit = 1 + g.below(7) as i64;
            let offset = if g.chance(50) {
                0
            } else {
                g.below(want.len() + 3) as i64
            };
            let words = query_words(&f.search_words);
            let found = index.find(&f, &words, limit, offset, Ts::from_micros(now));
            assert_eq!(found.total.items, want.len() as i64, "total of {f:?}");
            let page: Vec<Uuid> = want
                .iter()
                .skip(offset as usize)
                .take(limit as usize)
                .copied()
                .collect();
            assert_eq!(found.ids, page, "page {offset}+{limit} of {f:?}");
        }
    }

    /// Random arrivals (mostly in order, some late, some very late), edits of attributes
    /// and of words, and deletions, checked after every batch against the brute force.
    #[test]
    fn lists_match_brute_force_through_changes() {
        for seed in 1..=12u64 {
            let mut g = Gen(seed);
            let cats: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
            let mut index = OrgIndex::new();
            let mut docs: HashMap<Uuid, Doc> = HashMap::new();
            let mut clock = 1_000_000i64;
            for round in 0..8 {
                for _ in 0..150 {
                    let roll = g.below(100);
                    if roll < 60 || docs.is_empty() {
                        clock += 1 + g.below(3) as i64;
                        let created = match g.below(20) {
                            0 => clock - g.below(40) as i64,         // a little late
                            1 => 1 + g.below(clock as usize) as i64, // very late
                            _ => clock,
                        };
                        let d = doc(&mut g, Uuid::new_v4(), created, &cats);
                        index.put(&d, true).unwrap();
                        docs.insert(d.id, d);
                    } else {
                        let ids: Vec<Uuid> = docs.keys().copied().collect();
                        let id = ids[g.below(ids.len())];
                        let old = docs[&id].clone();
                        if roll < 75 {
                            index.remove((old.created_at.micros(), id));
                            docs.remove(&id);
                        } else {
                            let mut d = doc(&mut g, id, old.created_at.micros(), &cats);
                            let words = roll < 85;
                            if !words {
                                d.title = old.title.clone();
                                d.description_text = old.description_text.clone();
                            }
                            index.put(&d, words).unwrap();
                            // Applying the same change again changes nothing.
                            if g.chance(20) {
                                index.put(&d, false).unwrap();
                            }
                            docs.insert(id, d);
                        }
                    }
                }
                assert_eq!(index.len(), docs.len(), "seed {seed} round {round}");
                check(&index, &docs, &mut g, &cats);
                if round == 2 {
                    // Built again from the jobs in list order, as a node does; the
                    // next rounds change the built index.
                    let mut sorted: Vec<&Doc> = docs.values().collect();
                    sorted.sort_by_key(|d| d.key());
                    let mut built = OrgIndex::new();
                    let mut b = Build::default();
                    for d in sorted {
                        built.add_built(d, &mut b).unwrap();
                    }
                    built.finish_build(b);
                    assert_eq!(built.len(), docs.len());
                    index = built;
                    check(&index, &docs, &mut g, &cats);
                }
            }
        }
    }

    #[test]
    fn words_fold_case_and_accents() {
        let mut out = Vec::new();
        for_each_word("Café-Bar, NAÏVE straße 42x Ωmega", |w| {
            out.push(w.to_string())
        });
        assert_eq!(out, ["cafe", "bar", "naive", "strasse", "42x", "ωmega"]);
        assert_eq!(
            query_words(&["Rust".into(), "rust".into(), "Égal".into()]),
            ["egal", "rust"]
        );
    }
}
