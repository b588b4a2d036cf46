//! The index's own postings against the `roaring` crate, on the same jobs and searches, in
//! one run: bytes held, build time, and the throughput of the search mix, with every
//! search's total and first page checked equal between the two.
//!
//!     postings-bench JOBS.tsv QUERIES.txt
//!
//! Both engines get the same input: each job's distinct words (as the index splits them:
//! runs of letters and digits, lower case), its status, job type, location and remoteness,
//! in creation order (ordinal = line number). Both build the way the index does, one
//! ordinal after another; a search is what the index computes for `GET /api/jobs`:
//! active jobs, each filter (any of its values), each search word as a prefix (any word
//! it begins), intersected; the exact total and the 20 newest.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    collections::{BTreeMap, HashMap},
    io::BufRead,
    sync::atomic::{AtomicUsize, Ordering},
    time::Instant,
};

use jobboard_search::postings::{Block, Postings, block_and, block_count, block_iter_desc};
use roaring::{MultiOps, RoaringBitmap};

/// Counts the bytes allocated and not yet freed.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const STATUSES: [&str; 4] = ["pending", "active", "expired", "draft"];
const TYPES: [&str; 6] = [
    "full-time",
    "part-time",
    "contract",
    "internship",
    "temporary",
    "casual",
];
const PAGE: usize = 20;

/// The jobs, read once: per ordinal its distinct term numbers and attributes.
struct Data {
    terms: BTreeMap<String, u32>,
    words: Vec<Vec<u32>>,
    status: Vec<u8>,
    kind: Vec<u8>,
    location: Vec<u16>,
    remote: Vec<bool>,
    locations: Vec<String>,
}

fn split_words(text: &str, mut f: impl FnMut(&str)) {
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if !w.is_empty() {
            f(&w.to_lowercase());
        }
    }
}

fn read_data(path: &str) -> Data {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("jobs file"));
    let mut terms: HashMap<String, u32> = HashMap::new();
    let mut locs: HashMap<String, u16> = HashMap::new();
    let mut d = Data {
        terms: BTreeMap::new(),
        words: Vec::new(),
        status: Vec::new(),
        kind: Vec::new(),
        location: Vec::new(),
        remote: Vec::new(),
        locations: Vec::new(),
    };
    for line in file.lines() {
        let line = line.unwrap();
        let f: Vec<&str> = line.split('\t').collect();
        d.status
            .push(STATUSES.iter().position(|s| *s == f[0]).unwrap() as u8);
        d.kind
            .push(TYPES.iter().position(|s| *s == f[1]).unwrap() as u8);
        let n = locs.len() as u16;
        let l = *locs.entry(f[2].to_lowercase()).or_insert(n);
        d.location.push(l);
        d.remote.push(f[3] == "1");
        let mut ws = Vec::new();
        for text in &f[4..7] {
            split_words(text, |w| {
                let n = terms.len() as u32;
                ws.push(*terms.entry(w.to_string()).or_insert(n));
            });
        }
        ws.sort_unstable();
        ws.dedup();
        d.words.push(ws);
    }
    d.terms = terms.into_iter().collect();
    let mut names: Vec<(u16, String)> = locs.into_iter().map(|(k, v)| (v, k)).collect();
    names.sort();
    d.locations = names.into_iter().map(|(_, n)| n).collect();
    d
}

/// The sets of one engine: a set per word, status, job type and location, and remote.
struct Sets<S> {
    words: Vec<S>,
    statuses: Vec<S>,
    kinds: Vec<S>,
    locations: Vec<S>,
    remote: S,
}

fn build_own(d: &Data) -> Sets<Postings> {
    let mut s = Sets {
        words: (0..d.terms.len()).map(|_| Postings::new()).collect(),
        statuses: (0..4).map(|_| Postings::new()).collect(),
        kinds: (0..6).map(|_| Postings::new()).collect(),
        locations: (0..d.locations.len()).map(|_| Postings::new()).collect(),
        remote: Postings::new(),
    };
    // As the index builds: each word's ordinals of the chunk at hand, pushed per chunk.
    let mut pending: Vec<Vec<u16>> = vec![Vec::new(); d.terms.len()];
    let mut touched: Vec<u32> = Vec::new();
    let flush =
        |key: u16, pending: &mut Vec<Vec<u16>>, touched: &mut Vec<u32>, s: &mut Sets<Postings>| {
            for &t in touched.iter() {
                let lows = &mut pending[t as usize];
                s.words[t as usize].push_chunk(key, lows);
                lows.clear();
            }
            touched.clear();
        };
    let mut chunk = 0u16;
    for (o, ws) in d.words.iter().enumerate() {
        let o = o as u32;
        let key = (o >> 16) as u16;
        if key != chunk {
            flush(chunk, &mut pending, &mut touched, &mut s);
            chunk = key;
        }
        for &t in ws {
            let lows = &mut pending[t as usize];
            if lows.is_empty() {
                touched.push(t);
            }
            lows.push(o as u16);
        }
        s.statuses[d.status[o as usize] as usize].insert(o);
        s.kinds[d.kind[o as usize] as usize].insert(o);
        s.locations[d.location[o as usize] as usize].insert(o);
        if d.remote[o as usize] {
            s.remote.insert(o);
        }
    }
    flush(chunk, &mut pending, &mut touched, &mut s);
    drop(pending);
    for p in s.words.iter_mut() {
        p.shrink();
    }
    s
}

fn build_roaring(d: &Data, compact: bool) -> Sets<RoaringBitmap> {
    let mut s = Sets {
        words: (0..d.terms.len()).map(|_| RoaringBitmap::new()).collect(),
        statuses: (0..4).map(|_| RoaringBitmap::new()).collect(),
        kinds: (0..6).map(|_| RoaringBitmap::new()).collect(),
        locations: (0..d.locations.len())
            .map(|_| RoaringBitmap::new())
            .collect(),
        remote: RoaringBitmap::new(),
    };
    for (o, ws) in d.words.iter().enumerate() {
        let o = o as u32;
        for &t in ws {
            s.words[t as usize].try_push(o).expect("ascending");
        }
        s.statuses[d.status[o as usize] as usize]
            .try_push(o)
            .expect("ascending");
        s.kinds[d.kind[o as usize] as usize]
            .try_push(o)
            .expect("ascending");
        s.locations[d.location[o as usize] as usize]
            .try_push(o)
            .expect("ascending");
        if d.remote[o as usize] {
            s.remote.try_push(o).expect("ascending");
        }
    }
    if compact {
        // Run containers where they are smaller, and every container at its exact size
        // (a bitmap read back from its serialised form holds no spare capacity).
        for b in s
            .words
            .iter_mut()
            .chain(s.statuses.iter_mut())
            .chain(s.kinds.iter_mut())
            .chain(s.locations.iter_mut())
            .chain(std::iter::once(&mut s.remote))
        {
            b.optimize();
            let mut bytes = Vec::with_capacity(b.serialized_size());
            b.serialize_into(&mut bytes).unwrap();
            *b = RoaringBitmap::deserialize_from(&bytes[..]).unwrap();
        }
    }
    s
}

/// A search, resolved to set numbers: groups of alternatives that must all match.
struct Query {
    /// Each a group of alternatives (job types, locations, a word's expansions).
    any_of: Vec<Vec<usize>>,
    /// Which kind of set each group names: 0 word, 1 type, 2 location.
    kinds: Vec<u8>,
    remote: Option<bool>,
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let h = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap();
                out.push(h);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn parse_query(line: &str, d: &Data) -> Query {
    let mut q = Query {
        any_of: Vec::new(),
        kinds: Vec::new(),
        remote: None,
    };
    let params = line.split_once('?').map(|(_, p)| p).unwrap_or("");
    for pair in params.split('&') {
        let (k, v) = pair.split_once('=').unwrap();
        let v = decode(v);
        match k {
            "search" => split_words(&v, |w| {
                let expansions: Vec<usize> = d
                    .terms
                    .range(w.to_string()..)
                    .take_while(|(t, _)| t.starts_with(w))
                    .map(|(_, n)| *n as usize)
                    .collect();
                q.any_of.push(expansions);
                q.kinds.push(0);
            }),
            "job_types" => {
                q.any_of.push(
                    v.split(',')
                        .map(|t| TYPES.iter().position(|x| *x == t).unwrap())
                        .collect(),
                );
                q.kinds.push(1);
            }
            "locations" => {
                let wanted: Vec<String> = v.split(',').map(str::to_lowercase).collect();
                q.any_of.push(
                    d.locations
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| wanted.iter().any(|w| n.contains(w.as_str())))
                        .map(|(i, _)| i)
                        .collect(),
                );
                q.kinds.push(2);
            }
            "is_remote" => q.remote = Some(v == "true"),
            other => panic!("unknown parameter {other}"),
        }
    }
    q
}

fn group<'a, S>(s: &'a Sets<S>, kind: u8, i: usize) -> &'a S {
    match kind {
        0 => &s.words[i],
        1 => &s.kinds[i],
        _ => &s.locations[i],
    }
}

/// The total and the newest page, with the own postings: a chunk (65,536 ordinals) at a
/// time as a bitset, newest chunk first, as the index does.
fn search_own(s: &Sets<Postings>, q: &Query, chunks: u16) -> (u64, Vec<u32>) {
    let mut acc: Box<Block> = Box::new([0; 1024]);
    let mut tmp: Box<Block> = Box::new([0; 1024]);
    let mut total = 0u64;
    let mut page = Vec::new();
    for key in (0..chunks).rev() {
        acc.fill(0);
        s.statuses[1].or_into(key, &mut acc);
        for (g, kind) in q.any_of.iter().zip(&q.kinds) {
            tmp.fill(0);
            for &i in g {
                group(s, *kind, i).or_into(key, &mut tmp);
            }
            block_and(&mut acc, &tmp);
        }
        match q.remote {
            Some(true) => s.remote.and_into(key, &mut acc),
            Some(false) => s.remote.andnot_into(key, &mut acc),
            None => {}
        }
        total += u64::from(block_count(&acc));
        if page.len() < PAGE {
            for low in block_iter_desc(&acc) {
                page.push((u32::from(key) << 16) | u32::from(low));
                if page.len() == PAGE {
                    break;
                }
            }
        }
    }
    (total, page)
}

/// The same with `roaring`: each group's union, intersected.
fn search_roaring(s: &Sets<RoaringBitmap>, q: &Query) -> (u64, Vec<u32>) {
    let mut acc = s.statuses[1].clone();
    for (g, kind) in q.any_of.iter().zip(&q.kinds) {
        let u = g.iter().map(|&i| group(s, *kind, i)).union();
        acc &= &u;
    }
    match q.remote {
        Some(true) => acc &= &s.remote,
        Some(false) => acc -= &s.remote,
        None => {}
    }
    (acc.len(), acc.iter().rev().take(PAGE).collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let d = read_data(&args[1]);
    let lines: Vec<String> = std::fs::read_to_string(&args[2])
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let queries: Vec<Query> = lines.iter().map(|l| parse_query(l, &d)).collect();
    let chunks = ((d.words.len() as u32).div_ceil(1 << 16)) as u16;
    println!(
        "{} jobs, {} distinct words, {} searches",
        d.words.len(),
        d.terms.len(),
        queries.len()
    );

    let mut builds: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut bytes: HashMap<&str, usize> = HashMap::new();
    let mut keep_own = None;
    let mut keep_roaring = None;
    let mut keep_runs = None;
    for round in 0..3 {
        let before = LIVE.load(Ordering::Relaxed);
        let t = Instant::now();
        let own = build_own(&d);
        builds
            .entry("own")
            .or_default()
            .push(t.elapsed().as_secs_f64());
        bytes.insert("own", LIVE.load(Ordering::Relaxed) - before);
        let before = LIVE.load(Ordering::Relaxed);
        let t = Instant::now();
        let r = build_roaring(&d, false);
        builds
            .entry("roaring")
            .or_default()
            .push(t.elapsed().as_secs_f64());
        bytes.insert("roaring", LIVE.load(Ordering::Relaxed) - before);
        let before = LIVE.load(Ordering::Relaxed);
        let t = Instant::now();
        let runs = build_roaring(&d, true);
        builds
            .entry("roaring, compacted")
            .or_default()
            .push(t.elapsed().as_secs_f64());
        bytes.insert("roaring, compacted", LIVE.load(Ordering::Relaxed) - before);
        if round == 2 {
            keep_own = Some(own);
            keep_roaring = Some(r);
            keep_runs = Some(runs);
        }
    }
    let (own, r, runs) = (keep_own.unwrap(), keep_roaring.unwrap(), keep_runs.unwrap());

    // The same answers, search by search.
    for (q, line) in queries.iter().zip(&lines) {
        let a = search_own(&own, q, chunks);
        assert_eq!(a, search_roaring(&r, q), "{line}");
        assert_eq!(a, search_roaring(&runs, q), "{line}");
    }

    let mut rates: HashMap<&str, Vec<f64>> = HashMap::new();
    for _ in 0..5 {
        let t = Instant::now();
        for q in &queries {
            std::hint::black_box(search_own(&own, q, chunks));
        }
        rates
            .entry("own")
            .or_default()
            .push(queries.len() as f64 / t.elapsed().as_secs_f64());
        for (name, sets) in [("roaring", &r), ("roaring, compacted", &runs)] {
            let t = Instant::now();
            for q in &queries {
                std::hint::black_box(search_roaring(sets, q));
            }
            rates
                .entry(name)
                .or_default()
                .push(queries.len() as f64 / t.elapsed().as_secs_f64());
        }
    }

    println!(
        "| Engine | Bytes held | Build, median of 3 (s) | Search mix, median of 5 (searches/s, one thread) |"
    );
    println!("|---|---:|---:|---:|");
    for name in ["own", "roaring", "roaring, compacted"] {
        println!(
            "| {name} | {:.1} MiB | {:.2} | {:.0} |",
            bytes[name] as f64 / (1 << 20) as f64,
            median(builds[name].clone()),
            median(rates[name].clone()),
        );
    }
}
