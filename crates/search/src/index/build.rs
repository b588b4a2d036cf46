//! Putting jobs in the index and taking them out: one at a time as they change, or all
//! of an organization's in list order (a build).

use std::sync::Arc;

use super::{
    Build, Doc, Key, LOOSE_MIN, LOOSE_WORD, OrgIndex, REMOTE, REPACK_JOBS, STATUS_MASK, STICKY,
    TAIL_MAX, TAIL_POSTING, TYPE_MASK, TYPE_SHIFT, TooLarge, WINDOW,
    words::{PackedWords, doc_words},
};
use crate::postings::Postings;

impl OrgIndex {
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
        self.grow();
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
        self.repack_if_loose();
        Ok(())
    }

    /// Gives ordinal `o`, whose key was just pushed, its attributes from `doc`.
    fn attach(&mut self, o: u32, doc: &Doc) -> Result<(), TooLarge> {
        self.attrs.push(0);
        self.cats.push_none();
        self.locs.push_none();
        self.salaries.push_none();
        self.settle();
        self.set_attributes(o, doc)
    }

    /// Makes room for one more ordinal in each per-ordinal list, growing them by an
    /// eighth instead of doubling (a list of a million keys would otherwise hold up to a
    /// million spare ones).
    fn grow(&mut self) {
        if self.keys.len() < self.keys.capacity() {
            return;
        }
        let more = (self.keys.len() / 8).max(1024);
        self.keys.reserve_exact(more);
        self.attrs.reserve_exact(more);
        self.cats.reserve_exact(more);
        self.locs.reserve_exact(more);
        self.salaries.reserve_exact(more);
    }

    /// Moves `settled` up to the window's start, folding the keys it passes into
    /// `settled_max` (misplaced keys are the largest in place when they came: no harm).
    /// A chunk of ordinals that `settled` has passed takes no more jobs (a late one lands
    /// in the window, a misplaced one at the end): its sets are sealed.
    fn settle(&mut self) {
        let target = self.keys.len().saturating_sub(WINDOW);
        let before = self.settled >> 16;
        while self.settled < target {
            let k = self.keys[self.settled];
            self.settled_max = Some(self.settled_max.map_or(k, |m| m.max(k)));
            self.settled += 1;
        }
        for key in before..self.settled >> 16 {
            self.seal(key as u16);
        }
    }

    /// Gives back the spare capacity every set holds in chunk `key`.
    fn seal(&mut self, key: u16) {
        for p in self
            .postings
            .iter_mut()
            .chain(&mut self.statuses)
            .chain(&mut self.types)
            .chain([&mut self.remote, &mut self.sticky, &mut self.misplaced])
            .chain(&mut self.categories)
            .chain(self.locations.iter_mut().map(|(_, p)| p))
            .chain(&mut self.countries)
        {
            p.seal(key);
        }
    }

    fn index_words(&mut self, o: u32, doc: &Doc) {
        let mut buf = Vec::new();
        let n = doc_words(doc, &mut buf);
        let words = &buf[..n];
        // The packed words' numbers: their sets take the job in the packed words' tail.
        let mut packed = Vec::new();
        for (i, w) in words.iter().enumerate() {
            if i > 0 && *w == words[i - 1] {
                continue;
            }
            self.add_to_prefixes(w, o);
            // Each job rewrites the tail: it takes jobs while it is short and packing
            // again empties it.
            if (o as usize) < REPACK_JOBS
                && self.packed.tail_len() < TAIL_MAX
                && let Some(p) = self.packed.find(w)
            {
                packed.push(p);
                continue;
            }
            let w = w.clone();
            let t = match self.terms.get(w.as_str()) {
                Some(&t) => t,
                None => {
                    let t = self.postings.len() as u32;
                    self.postings.push(Postings::new());
                    self.terms.insert(w.into_boxed_str(), t);
                    self.loose += LOOSE_WORD;
                    t
                }
            };
            if self.postings[t as usize].insert(o) {
                self.loose += 1;
            }
        }
        if !packed.is_empty() {
            self.loose += TAIL_POSTING * packed.len();
            self.packed.add_job(&mut packed, o as u16);
        }
    }

    /// Packs the words of the map together with the packed ones once the map has grown
    /// to half the packed bytes (at least [`LOOSE_MIN`]) and the index by an eighth of
    /// its ordinals since the last packing, while it has at most [`REPACK_JOBS`]: a small
    /// board indexed job by job then holds about what a built one does, each job paying
    /// for about eight times its own words' share of a packing.
    fn repack_if_loose(&mut self) {
        let n = self.keys.len();
        if n > REPACK_JOBS
            || n < self.packed_at + self.packed_at / 8 + 16
            || self.loose < LOOSE_MIN.max(self.packed.heap_bytes() / 2)
        {
            return;
        }
        // Both in word order: merged as they come.
        let mut map = self.terms.iter().map(|(w, &t)| (&**w, t)).peekable();
        let mut words: Vec<(Box<str>, Vec<u16>)> = Vec::new();
        let loose = |t: u32| self.postings[t as usize].iter().map(|o| o as u16);
        for (w, mut lows) in self.packed.words() {
            while let Some(&(m, t)) = map.peek()
                && m < &*w
            {
                words.push((m.into(), loose(t).collect()));
                map.next();
            }
            if let Some(&(m, t)) = map.peek()
                && m == &*w
            {
                lows.extend(loose(t));
                lows.sort_unstable();
                lows.dedup();
                map.next();
            }
            words.push((w, lows));
        }
        words.extend(map.map(|(m, t)| (m.into(), loose(t).collect())));
        let text = words.iter().map(|(w, _)| w.len()).sum();
        let members = words.iter().map(|(_, l)| l.len()).sum();
        self.packed_at = n;
        if !PackedWords::fit(words.len(), text, members) {
            return;
        }
        self.packed = PackedWords::pack(words);
        self.terms = Default::default();
        self.postings = Vec::new();
        self.loose = 0;
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
                    let t = build.pending.len() as u32;
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
        build.flushed = true;
        self.postings
            .resize_with(build.pending.len(), Postings::new);
        for (t, lows) in build.pending.iter_mut().enumerate() {
            self.postings[t].push_chunk(chunk, lows);
            lows.clear();
        }
    }

    /// Ends a build made with [`OrgIndex::add_built`]: packs the words of a build of at
    /// most 65,536 jobs, or stores the last chunk and takes the term map, and gives back
    /// the memory the growing lists kept in reserve.
    pub fn finish_build(&mut self, mut build: Build) {
        let packable = !build.flushed
            && PackedWords::fit(
                build.terms.len(),
                build.terms.keys().map(|w| w.len()).sum(),
                build.pending.iter().map(Vec::len).sum(),
            );
        if packable {
            let terms = std::mem::take(&mut build.terms);
            let words = terms
                .into_iter()
                .map(|(w, t)| (w, build.pending[t as usize].as_slice()))
                .collect();
            self.packed = PackedWords::pack(words);
        } else {
            self.flush(&mut build);
            self.terms.extend(build.terms);
        }
        for p in &mut self.postings {
            p.shrink();
        }
        self.keys.shrink_to_fit();
        self.attrs.shrink_to_fit();
        self.cats.shrink_to_fit();
        self.locs.shrink_to_fit();
        self.salaries.shrink_to_fit();
    }

    /// Sets the listed attributes of ordinal `o` (live or not) to those of `doc`.
    fn set_attributes(&mut self, o: u32, doc: &Doc) -> Result<(), TooLarge> {
        let status = self.status_index(&doc.status).ok_or(TooLarge)?;
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
        let mut countries: Vec<u16> = Vec::with_capacity(doc.countries.len());
        for c in &doc.countries {
            let n = match self.country_numbers.get(c.as_str()) {
                Some(&n) => n,
                None => {
                    let n = u16::try_from(self.countries.len() + 1).map_err(|_| TooLarge)?;
                    self.countries.push(Postings::new());
                    self.country_numbers.insert(c.as_str().into(), n);
                    n
                }
            };
            if !countries.contains(&n) {
                countries.push(n);
            }
        }
        self.clear_attributes(o);
        for &n in &countries {
            self.countries[n as usize - 1].insert(o);
        }
        if !countries.is_empty() {
            self.job_countries.insert(o, countries.into_boxed_slice());
        }
        let (len, capacity) = (self.keys.len(), self.keys.capacity());
        let salary = doc.salary.unwrap_or(f64::NAN);
        self.salaries.set(o, salary, len, capacity);
        let mut a = (status + 1) as u8;
        if let Some(t) = doc.job_type.as_deref().and_then(|t| self.type_index(t)) {
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
        if let (Some(e), true) = (doc.expires_at, doc.status == self.names.expiring) {
            self.expiring.insert((e.micros(), o));
            self.expiry_of.insert(o, e.micros());
        }
        self.attrs[o as usize] = a;
        self.cats.set(o, category, len, capacity);
        self.locs.set(o, location, len, capacity);
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
        let c = self.cats.get(o);
        if c != 0 {
            self.categories[c as usize - 1].remove(o);
        }
        let l = self.locs.get(o);
        if l != 0 {
            self.locations[l as usize - 1].1.remove(o);
        }
        if let Some(e) = self.expiry_of.remove(&o) {
            self.expiring.remove(&(e, o));
        }
        if let Some(cs) = self.job_countries.remove(&o) {
            for n in cs.iter() {
                self.countries[*n as usize - 1].remove(o);
            }
        }
        let (len, capacity) = (self.keys.len(), self.keys.capacity());
        self.salaries.set(o, f64::NAN, len, capacity);
        self.attrs[o as usize] = 0;
        self.cats.set(o, 0, len, capacity);
        self.locs.set(o, 0, len, capacity);
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
}
