use std::collections::HashMap;

use uuid::Uuid;

use jobboard_core::Ts;

use super::{Build, Doc, Names, OrgIndex, Query, for_each_word, query_words};

/// The statuses and job types of the jobs (as the service names them).
const STATUSES: [&str; 4] = ["pending", "active", "expired", "draft"];
const TYPES: [&str; 6] = [
    "full-time",
    "part-time",
    "contract",
    "internship",
    "temporary",
    "casual",
];
const NAMES: Names = Names {
    statuses: &STATUSES,
    job_types: &TYPES,
    expiring: "active",
};

/// A list as a front door asks it (the page apart).
#[derive(Debug, Default)]
struct Filter {
    statuses: Option<Vec<&'static str>>,
    job_types: Vec<&'static str>,
    locations: Vec<String>,
    categories: Vec<Uuid>,
    remote: Option<bool>,
    country: Option<&'static str>,
    salary_min: Option<f64>,
    search_words: Vec<String>,
}

impl Filter {
    fn query(&self, limit: i64, offset: i64) -> Query<'_> {
        Query {
            statuses: self.statuses.as_deref(),
            job_types: &self.job_types,
            locations: &self.locations,
            categories: &self.categories,
            remote: self.remote,
            country: self.country,
            salary_min: self.salary_min,
            words: &self.search_words,
            limit,
            offset,
        }
    }
}

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
const COUNTRIES: [&str; 4] = ["DE", "FR", "US", "AT"];

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
        status: STATUSES[g.below(4)].to_string(),
        is_sticky: g.chance(10),
        is_remote: g.chance(30),
        job_type: g.chance(80).then(|| TYPES[g.below(6)].to_string()),
        category_id: g.chance(70).then(|| cats[g.below(cats.len())]),
        location: g
            .chance(80)
            .then(|| PLACES[g.below(PLACES.len())].to_string()),
        countries: (0..g.below(3))
            .map(|_| COUNTRIES[g.below(COUNTRIES.len())].to_string())
            .collect(),
        salary: g.chance(60).then(|| g.below(100) as f64 * 1.5),
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
fn reference(docs: &HashMap<Uuid, Doc>, f: &Filter, now: i64) -> Vec<Uuid> {
    let words = query_words(&f.search_words);
    let mut hits: Vec<&Doc> = docs
        .values()
        .filter(|d| {
            f.statuses
                .as_ref()
                .is_none_or(|l| l.iter().any(|s| *s == d.status))
                && !(d.status == "active" && d.expires_at.is_some_and(|e| e.micros() <= now))
                && (f.job_types.is_empty()
                    || f.job_types
                        .iter()
                        .any(|t| Some(*t) == d.job_type.as_deref()))
                && (f.categories.is_empty()
                    || f.categories.iter().any(|c| Some(*c) == d.category_id))
                && (f.locations.is_empty()
                    || d.location.as_ref().is_some_and(|l| {
                        f.locations
                            .iter()
                            .any(|w| l.to_lowercase().contains(w.as_str()))
                    }))
                && f.remote.is_none_or(|r| r == d.is_remote)
                && f.country.is_none_or(|c| d.countries.iter().any(|x| x == c))
                && f.salary_min
                    .is_none_or(|m| d.salary.is_some_and(|s| s >= m))
                && words
                    .iter()
                    .all(|w| words_of(d).iter().any(|t| t.starts_with(w.as_str())))
        })
        .collect();
    hits.sort_by(|a, b| {
        (b.is_sticky, b.created_at.micros(), b.id).cmp(&(a.is_sticky, a.created_at.micros(), a.id))
    });
    hits.into_iter().map(|d| d.id).collect()
}

fn filter(g: &mut Gen, cats: &[Uuid]) -> Filter {
    let mut f = Filter::default();
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
        f.job_types = (0..1 + g.below(2)).map(|_| TYPES[g.below(6)]).collect();
    }
    if g.chance(20) {
        f.categories = vec![cats[g.below(cats.len())]];
    }
    if g.chance(25) {
        f.locations = vec![["berl", "york", "paris", "x"][g.below(4)].to_string()];
    }
    if g.chance(25) {
        f.remote = Some(g.chance(50));
    }
    if g.chance(25) {
        f.country = Some(["DE", "FR", "US", "AT", "JP"][g.below(5)]);
    }
    if g.chance(25) {
        f.salary_min = Some(g.below(160) as f64);
    }
    f.statuses = match g.below(3) {
        0 => None,
        1 => Some(vec!["active"]),
        _ => Some(vec!["pending", "draft"]),
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
        let found = index.find(&f.query(limit, offset), Ts::from_micros(now));
        assert_eq!(found.total, want.len() as i64, "total of {f:?}");
        let page: Vec<Uuid> = want
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .copied()
            .collect();
        assert_eq!(found.ids, page, "page {offset}+{limit} of {f:?}");
    }
}

/// An index built from `docs` in list order, as a node builds one.
fn built<'a>(docs: impl Iterator<Item = &'a Doc>) -> OrgIndex {
    let mut sorted: Vec<&Doc> = docs.collect();
    sorted.sort_by_key(|d| d.key());
    let mut index = OrgIndex::new(NAMES);
    let mut b = Build::default();
    for d in sorted {
        index.add_built(d, &mut b).unwrap();
    }
    index.finish_build(b);
    index
}

/// Random arrivals (mostly in order, some late, some very late), edits of attributes
/// and of words, and deletions, checked after every batch against the brute force.
#[test]
fn lists_match_brute_force_through_changes() {
    for seed in 1..=12u64 {
        let mut g = Gen(seed);
        let cats: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
        let mut index = OrgIndex::new(NAMES);
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
                let built = built(docs.values());
                assert_eq!(built.len(), docs.len());
                index = built;
                check(&index, &docs, &mut g, &cats);
            }
        }
    }
}

/// Jobs written by concurrent writers arrive a little out of list order: each is
/// committed after some of the jobs created after it (up to a batch of writers, now and
/// then after a stall of thousands). Within the window none is misplaced, the index never
/// wears, and lists stay exact.
#[test]
fn concurrent_arrivals_stay_in_place() {
    let mut g = Gen(99);
    let cats: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
    let n = 9_000;
    let mut arrivals: Vec<(usize, Doc)> = (0..n)
        .map(|i| {
            let late = if g.chance(1) {
                g.below(3_000)
            } else {
                g.below(60)
            };
            (
                i + late,
                doc(&mut g, Uuid::new_v4(), 1_000 + 3 * i as i64, &cats),
            )
        })
        .collect();
    arrivals.sort_by_key(|a| a.0);
    let mut index = OrgIndex::new(NAMES);
    let mut docs: HashMap<Uuid, Doc> = HashMap::new();
    for (i, (_, d)) in arrivals.into_iter().enumerate() {
        index.put(&d, true).unwrap();
        docs.insert(d.id, d);
        if (i + 1) % 3_000 == 0 {
            assert_eq!(index.len(), docs.len());
            check(&index, &docs, &mut g, &cats);
        }
    }
    let wear = index.wear();
    assert_eq!((wear.misplaced, wear.forgotten), (0, 0), "{wear:?}");
    assert!(
        wear.displacement > 0 && wear.displacement <= 3_001,
        "{wear:?}"
    );
    assert!(!index.worn());
    // Every job is found where it is, however late it came: a change of its attributes
    // changes it in place, adding nothing.
    for d in docs.values() {
        index.put(d, false).unwrap();
    }
    assert_eq!(index.len(), docs.len());
    assert_eq!(index.wear(), wear);
    check(&index, &docs, &mut g, &cats);
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

/// A status the names lack is refused (the index cannot list the job); a job type they
/// lack counts as none; only jobs of the expiring status leave lists at their expiry.
#[test]
fn names_decide_what_is_indexed() {
    let job = |status: &str, job_type: Option<&str>, created: i64| Doc {
        id: Uuid::new_v4(),
        created_at: Ts::from_micros(created),
        status: status.into(),
        is_sticky: false,
        is_remote: false,
        job_type: job_type.map(str::to_string),
        category_id: None,
        location: None,
        countries: Vec::new(),
        salary: None,
        expires_at: Some(Ts::from_micros(10)),
        title: "Chef".into(),
        company_name: "Acme".into(),
        description_text: String::new(),
    };
    assert!(
        OrgIndex::new(NAMES)
            .put(&job("archived", None, 1), true)
            .is_err()
    );
    let mut index = OrgIndex::new(NAMES);
    let odd = job("draft", Some("volunteer"), 2);
    let due = job("active", Some("contract"), 3);
    index.put(&odd, true).unwrap();
    index.put(&due, true).unwrap();
    assert_eq!(index.len(), 2);
    let all = Filter::default();
    let found = index.find(&all.query(10, 0), Ts::from_micros(5));
    assert_eq!((found.ids, found.total), (vec![due.id, odd.id], 2));
    let found = index.find(&all.query(10, 0), Ts::from_micros(10));
    assert_eq!((found.ids, found.total), (vec![odd.id], 1));
    let contract = Filter {
        job_types: vec!["contract", "volunteer"],
        ..Filter::default()
    };
    let found = index.find(&contract.query(10, 0), Ts::from_micros(5));
    assert_eq!((found.ids, found.total), (vec![due.id], 1));
}

/// An index grown one job at a time past two chunks of ordinals (arrivals a little out of
/// order) answers as one built from the same jobs, and holds about the same bytes: the
/// chunks the window has passed are sealed, and the per-ordinal lists grow by an eighth.
#[test]
fn a_grown_index_holds_about_what_a_built_one_does() {
    let mut g = Gen(77);
    let cats: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
    let n = 2 * 65_536 + 5_000;
    let mut arrivals: Vec<(usize, Doc)> = (0..n)
        .map(|i| {
            let late = g.below(30);
            (
                i + late,
                doc(&mut g, Uuid::new_v4(), 1_000 + 3 * i as i64, &cats),
            )
        })
        .collect();
    arrivals.sort_by_key(|a| a.0);
    let mut grown = OrgIndex::new(NAMES);
    for (_, d) in &arrivals {
        grown.put(d, true).unwrap();
    }
    let built = built(arrivals.iter().map(|a| &a.1));
    assert_eq!(grown.wear().misplaced, 0);
    let (g_bytes, b_bytes) = (grown.heap_bytes(), built.heap_bytes());
    assert!(
        g_bytes * 100 <= b_bytes * 115,
        "grown {g_bytes} bytes, built {b_bytes}"
    );
    for _ in 0..300 {
        let f = filter(&mut g, &cats);
        let now = g.below(2_000) as i64;
        let (limit, offset) = (1 + g.below(20) as i64, g.below(50) as i64);
        let q = f.query(limit, offset);
        assert_eq!(
            grown.find(&q, Ts::from_micros(now)),
            built.find(&q, Ts::from_micros(now)),
            "{f:?}"
        );
    }
}

/// A board of a thousand jobs, with descriptions of forty words from a vocabulary of
/// thousands as real boards have: built, its words are packed, in under half the bytes
/// of the same build with its words in a map of sets; indexed job by job, they are
/// packed again as they come, and hold about what the build does. All three answer every list alike, before and after more
/// jobs (with words old and new) are put in the built and the grown one.
#[test]
fn a_small_boards_built_index_packs_its_words() {
    let mut g = Gen(5);
    let cats: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
    let vocabulary: Vec<String> = (0..3_000).map(|i| format!("w{i}x")).collect();
    let text = |g: &mut Gen, n: usize| -> String {
        (0..n)
            // Skewed: low numbers far more often.
            .map(|_| {
                let top = 1 + g.below(vocabulary.len());
                vocabulary[g.below(top)].as_str()
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let lists = |g: &mut Gen, a: &OrgIndex, b: &OrgIndex| {
        for i in 0..300 {
            let mut f = filter(g, &cats);
            if i % 2 == 0 {
                // A word of the vocabulary, whole or its beginning.
                let w = &vocabulary[g.below(vocabulary.len())];
                f.search_words = vec![w[..1 + g.below(w.len())].to_string()];
            }
            let q = f.query(1 + g.below(20) as i64, g.below(30) as i64);
            let now = Ts::from_micros(g.below(2_000) as i64);
            assert_eq!(a.find(&q, now), b.find(&q, now), "{f:?}");
        }
    };
    let docs: Vec<Doc> = (0..1_000)
        .map(|i| {
            let mut d = doc(&mut g, Uuid::new_v4(), 1_000 + i, &cats);
            d.description_text = text(&mut g, 40);
            d
        })
        .collect();
    let mut grown = OrgIndex::new(NAMES);
    for d in &docs {
        grown.put(d, true).unwrap();
    }
    let mut packed = built(docs.iter());
    // The same build, its words kept in a map of sets as a larger build's are.
    let mut unpacked = OrgIndex::new(NAMES);
    let mut b = Build {
        flushed: true,
        ..Build::default()
    };
    for d in &docs {
        unpacked.add_built(d, &mut b).unwrap();
    }
    unpacked.finish_build(b);
    let (p_bytes, u_bytes) = (packed.heap_bytes(), unpacked.heap_bytes());
    assert!(
        p_bytes * 2 < u_bytes,
        "packed {p_bytes} bytes, not {u_bytes}"
    );
    // Indexed job by job, its words were packed again as they came, the jobs since
    // the last packing in the packed words' tail: about what the build holds.
    let g_bytes = grown.heap_bytes();
    assert!(
        g_bytes * 4 <= p_bytes * 5,
        "grown {g_bytes} bytes, packed {p_bytes}"
    );
    lists(&mut g, &packed, &unpacked);
    lists(&mut g, &packed, &grown);
    for i in 0..200 {
        let mut d = doc(&mut g, Uuid::new_v4(), 2_000 + i, &cats);
        d.description_text = format!("{} new{i}word", text(&mut g, 10));
        grown.put(&d, true).unwrap();
        packed.put(&d, true).unwrap();
    }
    lists(&mut g, &packed, &grown);
}
