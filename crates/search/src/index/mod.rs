//! An organization's jobs as an in-memory search index: what answers a search or a
//! filtered list in microseconds, whatever the words and however many jobs match.
//!
//! Every job has an *ordinal*, its place in list order (oldest first, by `created_at`
//! then id), and every word, status, job type, category, location, stickiness and
//! remoteness has the set of ordinals that have it ([`Postings`]). A list is computed
//! 65,536 ordinals at a time as a bitset: the listed statuses, each filter (any of its
//! values), and each search word (any word it is a prefix of), intersected, less the
//! active jobs (those of the expiring status) already past `expires_at`. The total is the number of bits set; a page is
//! read from the highest ordinals down (newest first), sticky jobs first.
//!
//! Jobs mostly arrive in list order. One that arrives late (created earlier, committed
//! after newer ones) is still given the next ordinal: the index records how far out of
//! place any job can be (`displacement`) and sorts a page from the few extra candidates
//! that allows. One that arrives too late for that, or whose words changed (its words are
//! not kept, so it is indexed again under a new ordinal, the old one forgotten), is
//! *misplaced*: kept in a small set that pages take into account one by one. When that
//! set or the forgotten ordinals grow large, the owner builds the index again.
//!
//! The index knows no resource: a job is a [`Doc`], its status and job type are names
//! from the lists given to [`OrgIndex::new`] ([`Names`]), and a list is asked as a
//! [`Query`].

mod build;
mod column;
mod find;
#[cfg(test)]
mod tests;
mod words;

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::{Arc, Mutex},
};

use jobboard_core::Ts;
use uuid::Uuid;

use crate::postings::Postings;

use column::Column;
use words::PackedWords;
pub use words::{for_each_word, query_words};

/// A job's place in list order: `created_at` (microseconds) and id.
pub type Key = (i64, Uuid);

/// How many of the newest ordinals a late job may land behind and still count as in
/// place; beyond that it is misplaced.
const WINDOW: usize = 4096;

/// An index of at most this many ordinals packs its words again as jobs come (in
/// `build.rs`); a packing takes about 10 ms at this size (1,000 jobs: about 2).
const REPACK_JOBS: usize = 16_384;

/// What the words' map and the packed words' tail hold beyond the packed words before
/// they are packed again, at least, in the units of `loose`: about bytes (a word in the
/// map about 100, an ordinal of a word's set in the map about one, in the tail six).
const LOOSE_MIN: usize = 16_384;
const LOOSE_WORD: usize = 100;
const TAIL_POSTING: usize = 6;

/// The most ordinals the packed words' tail holds (each job indexed rewrites it: at most
/// 96 KiB); past it, words go to the map.
const TAIL_MAX: usize = 16_384;

/// A search word that begins at least this many words is answered from the union of
/// their sets, made once and kept (see [`OrgIndex::prefix_union`]).
const PREFIX_TERMS: usize = 8;

/// The closed sets of values an index names: the statuses a job may be in and the job
/// types it may have (at most 7 of each: an ordinal's attributes keep each in three
/// bits), and the status whose jobs leave every list once past their `expires_at`.
#[derive(Debug, Clone, Copy)]
pub struct Names {
    pub statuses: &'static [&'static str],
    pub job_types: &'static [&'static str],
    pub expiring: &'static str,
}

/// A job as the index reads it.
#[derive(Debug, Clone)]
pub struct Doc {
    pub id: Uuid,
    pub created_at: Ts,
    /// One of [`Names::statuses`]: a job in any other status cannot be indexed.
    pub status: String,
    pub is_sticky: bool,
    pub is_remote: bool,
    /// One of [`Names::job_types`] (any other counts as none).
    pub job_type: Option<String>,
    pub category_id: Option<Uuid>,
    pub location: Option<String>,
    /// The country codes a country filter finds the job under (the owner says which:
    /// for jobs, its country and the countries a remote job may be done from).
    pub countries: Vec<String>,
    /// The amount a salary filter compares with (none: no salary filter finds the job).
    pub salary: Option<f64>,
    pub expires_at: Option<Ts>,
    pub title: String,
    pub company_name: String,
    pub description_text: String,
}

impl Doc {
    /// The job's place in list order.
    pub fn key(&self) -> Key {
        (self.created_at.micros(), self.id)
    }
}

// The attributes of an ordinal, one byte: status (0 = no job), job type, remote, sticky.
const STATUS_MASK: u8 = 0b0000_0111;
const TYPE_SHIFT: u8 = 3;
const TYPE_MASK: u8 = 0b0011_1000;
const REMOTE: u8 = 0b0100_0000;
const STICKY: u8 = 0b1000_0000;

/// What a build keeps between jobs: the words of the job at hand, the term map, and
/// each word's ordinals in the chunk being read.
#[derive(Debug, Default)]
pub struct Build {
    words: Vec<String>,
    terms: HashMap<Box<str>, u32>,
    pending: Vec<Vec<u16>>,
    chunk: Option<u16>,
    /// Whether a chunk was stored (a build of ordinals past 65,536, not packed).
    flushed: bool,
}

/// Why an organization's jobs cannot be indexed: a status the index does not name, more
/// distinct categories or locations than an ordinal's attributes can name, more jobs than
/// ordinals, or a build's jobs not in list order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// A list to find: the jobs that have one of the statuses, one of the values of each
/// filter given, and every word, newest first (sticky jobs first), and the page of it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<'a> {
    /// The statuses listed, by name (a name the index does not know matches nothing);
    /// `None` is every status.
    pub statuses: Option<&'a [&'a str]>,
    /// Job types by name, any of which a job must have (empty: no filter).
    pub job_types: &'a [&'a str],
    /// Lower-case substrings, one of which a job's location must contain (empty: no
    /// filter).
    pub locations: &'a [String],
    /// Categories, one of which a job must be in (empty: no filter).
    pub categories: &'a [Uuid],
    /// Whether a job must be remote, or not (`None`: either).
    pub remote: Option<bool>,
    /// A country code a job must be found under (`None`: no filter).
    pub country: Option<&'a str>,
    /// The least salary a job must have (`None`: no filter).
    pub salary_min: Option<f64>,
    /// The words of the search as typed: each word of them ([`query_words`]) must begin
    /// a word of the job's title, company name or description.
    pub words: &'a [String],
    /// The page: at most `limit` jobs after the first `offset`.
    pub limit: i64,
    pub offset: i64,
}

/// What a list found: the ids of the page's jobs in list order, and the exact number of
/// jobs in the list.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub ids: Vec<Uuid>,
    pub total: i64,
}

/// What sets an index apart from a fresh build of the same jobs (which has none of it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wear {
    /// Jobs that arrived too far out of list order, or were indexed again: a page that
    /// matches them sorts them one by one.
    pub misplaced: usize,
    /// Ordinals of jobs removed or indexed again, still in their words' sets.
    pub forgotten: usize,
    /// How many ordinals a job in place may be from its rank: a page sorts that many
    /// extra candidates.
    pub displacement: usize,
}

/// One organization's jobs, indexed.
#[derive(Debug)]
pub struct OrgIndex {
    names: Names,
    /// By ordinal: the job's key, or for a misplaced ordinal the largest key in place
    /// when it came (so that the keys stay in order within the displacement).
    keys: Vec<Key>,
    attrs: Vec<u8>,
    /// By ordinal: the category (0: none, else its number + 1).
    cats: Column<u16>,
    /// By ordinal: the location (0: none, else its number + 1).
    locs: Column<u32>,
    /// By ordinal: the salary a filter compares with (NaN: none).
    salaries: Column<f64>,
    /// The words of a build of at most 65,536 jobs, packed with their jobs then.
    packed: PackedWords,
    /// Every other word (and each packed word that a job indexed later has), and the
    /// number of its postings.
    terms: BTreeMap<Box<str>, u32>,
    /// About the bytes the map took since the words were last packed, and how many
    /// ordinals there were then.
    loose: usize,
    packed_at: usize,
    postings: Vec<Postings>,
    /// By position in [`Names::statuses`] and [`Names::job_types`].
    statuses: Vec<Postings>,
    types: Vec<Postings>,
    remote: Postings,
    sticky: Postings,
    categories: Vec<Postings>,
    category_numbers: HashMap<Uuid, u16>,
    /// Locations in lower case, with their jobs.
    locations: Vec<(Box<str>, Postings)>,
    location_numbers: HashMap<Box<str>, u32>,
    /// Country codes, with their jobs; and the numbers (+ 1) of each job's codes.
    countries: Vec<Postings>,
    country_numbers: HashMap<Box<str>, u16>,
    job_countries: HashMap<u32, Box<[u16]>>,
    /// Jobs in the expiring status with an expiry: `(expires_at, ordinal)`, and each
    /// one's expiry.
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
    /// An empty index of jobs whose statuses and job types are `names`.
    ///
    /// # Panics
    ///
    /// When `names` has more than 7 statuses or more than 7 job types.
    pub fn new(names: Names) -> OrgIndex {
        assert!(
            names.statuses.len() <= 7 && names.job_types.len() <= 7,
            "an index names at most 7 statuses and 7 job types"
        );
        OrgIndex {
            names,
            keys: Vec::new(),
            attrs: Vec::new(),
            cats: Column::new(),
            locs: Column::new(),
            salaries: Column::new(),
            packed: PackedWords::default(),
            terms: BTreeMap::new(),
            loose: 0,
            packed_at: 0,
            postings: Vec::new(),
            statuses: names.statuses.iter().map(|_| Postings::new()).collect(),
            types: names.job_types.iter().map(|_| Postings::new()).collect(),
            remote: Postings::new(),
            sticky: Postings::new(),
            categories: Vec::new(),
            category_numbers: HashMap::new(),
            locations: Vec::new(),
            location_numbers: HashMap::new(),
            countries: Vec::new(),
            country_numbers: HashMap::new(),
            job_countries: HashMap::new(),
            expiring: BTreeSet::new(),
            expiry_of: HashMap::new(),
            misplaced: Postings::new(),
            misplaced_ids: HashMap::new(),
            misplaced_keys: HashMap::new(),
            displacement: 0,
            max_key: None,
            settled: 0,
            settled_max: None,
            live: 0,
            forgotten: 0,
            prefixes: Mutex::new(Prefixes::default()),
        }
    }

    /// The number of jobs indexed.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when no job is indexed.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// True when the index should be built again: many misplaced ordinals (every page
    /// that matches them sorts them) or many forgotten ones (their words' sets still
    /// hold them).
    pub fn worn(&self) -> bool {
        self.misplaced.len() as usize > 1_000 + self.live / 100
            || self.forgotten > 1_000 + self.live / 10
    }

    /// How far the index is from a fresh build of the same jobs.
    pub fn wear(&self) -> Wear {
        Wear {
            misplaced: self.misplaced.len() as usize,
            forgotten: self.forgotten,
            displacement: self.displacement,
        }
    }

    /// Reserves room for `n` more jobs (a build that knows how many are coming).
    pub fn reserve(&mut self, n: usize) {
        self.keys.reserve_exact(n);
        self.attrs.reserve_exact(n);
        self.cats.reserve_exact(n);
        self.locs.reserve_exact(n);
        self.salaries.reserve_exact(n);
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
            .chain(&self.countries)
            .map(Postings::heap_bytes)
            .sum();
        let words: usize = self.terms.keys().map(|k| k.len() + 40).sum();
        let per_ordinal = self.keys.capacity() * std::mem::size_of::<Key>()
            + self.attrs.capacity()
            + self.cats.heap_bytes()
            + self.locs.heap_bytes()
            + self.salaries.heap_bytes();
        let maps = (self.expiring.len() + self.expiry_of.len()) * 32
            + (self.misplaced_ids.len() + self.misplaced_keys.len()) * 48
            + self
                .locations
                .iter()
                .map(|(l, _)| 2 * l.len() + 64)
                .sum::<usize>()
            + self.categories.len() * 64
            + self.country_numbers.len() * 64
            + self
                .job_countries
                .values()
                .map(|c| 48 + c.len() * 2)
                .sum::<usize>();
        sets + prefixes
            + words
            + self.packed.heap_bytes()
            + per_ordinal
            + maps
            + self.postings.capacity() * std::mem::size_of::<Postings>()
    }

    /// The position of status `s` among the names.
    fn status_index(&self, s: &str) -> Option<usize> {
        self.names.statuses.iter().position(|x| *x == s)
    }

    /// The position of job type `s` among the names.
    fn type_index(&self, s: &str) -> Option<usize> {
        self.names.job_types.iter().position(|x| *x == s)
    }

    fn is_live(&self, o: u32) -> bool {
        self.attrs[o as usize] & STATUS_MASK != 0
    }

    /// The real key of ordinal `o`.
    fn key_of(&self, o: u32) -> Key {
        match self.misplaced_keys.get(&o) {
            Some(k) => *k,
            None => self.keys[o as usize],
        }
    }
}
