//! A name noted in 8 bytes: its 64-bit fingerprint (the strict reading's wide objects, sorted
//! once they end), and a set of them asked as they come (a stream reader keeping no value).

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

/// A key's fingerprint (the standard hasher with its fixed keys: the same for a whole run).
pub(crate) fn fingerprint(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A set of fingerprints held in about 10 bytes each, while it grows too.
///
/// A hash set of them costs 9 bytes a slot with a slot in three empty on average, and while it
/// grows it holds its old table and a new one twice as large: up to 15 bytes an entry. Here
/// most are in a sorted list (8 bytes each, searched by halves), the latest in a small hash set
/// of at most an eighth as many, merged into the list whenever it fills: each merge moves the
/// list once, and as the set grows with the list, the moves come to about nine per entry over
/// the whole set. 700,000 names streamed: 23.9 MB resident against 30.2 MB with a hash set
/// (`scripts/cli-memory`'s members answer through `structured stream`, `VmRSS` read every 10 ms
/// until the final reading). An object of a few names never leaves the hash set.
#[derive(Default)]
pub(crate) struct Fingerprints {
    /// Sorted, each once, none of them in `recent`.
    sorted: Vec<u64>,
    recent: HashSet<u64, BuildHasherDefault<Fingerprinted>>,
}

impl Fingerprints {
    /// The most `recent` holds before it is merged into `sorted`, whatever their number.
    const RECENT_AT_LEAST: usize = 1024;

    /// Notes `print`; `false` when it was noted before.
    pub(crate) fn insert(&mut self, print: u64) -> bool {
        if self.sorted.binary_search(&print).is_ok() || !self.recent.insert(print) {
            return false;
        }
        if self.recent.len() > Self::RECENT_AT_LEAST.max(self.sorted.len() / 8) {
            self.merge();
        }
        true
    }

    /// Whether `print` was noted.
    pub(crate) fn contains(&self, print: u64) -> bool {
        self.recent.contains(&print) || self.sorted.binary_search(&print).is_ok()
    }

    /// How many distinct fingerprints were noted.
    pub(crate) fn len(&self) -> usize {
        self.sorted.len() + self.recent.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sorted.is_empty() && self.recent.is_empty()
    }

    /// Moves `recent` into `sorted`, merging from the back in place (the two hold none in
    /// common). `recent` keeps its table: it fills again, to more.
    fn merge(&mut self) {
        let mut recent: Vec<u64> = self.recent.drain().collect();
        recent.sort_unstable();
        // `sorted[..old]` are the old ones not yet placed; the slots from `to` on are filled.
        let mut old = self.sorted.len();
        self.sorted.resize(old + recent.len(), 0);
        let mut to = self.sorted.len();
        while let Some(&newest) = recent.last() {
            to -= 1;
            let before = old.checked_sub(1).and_then(|i| self.sorted.get(i)).copied();
            let next = match before {
                Some(before) if before > newest => {
                    old -= 1;
                    before
                }
                _ => {
                    recent.pop();
                    newest
                }
            };
            if let Some(slot) = self.sorted.get_mut(to) {
                *slot = next;
            }
        }
        // (What is left of the old ones is where it was.)
    }
}

/// Hashes a fingerprint by itself: it is one already.
#[derive(Default)]
pub(crate) struct Fingerprinted(u64);

impl std::hash::Hasher for Fingerprinted {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The set answers as a plain hash set does, over runs long enough to merge many times
        /// (few distinct values, so repeats come both before and after a merge).
        #[test]
        fn answers_as_a_hash_set_does(
            prints in prop::collection::vec(0u64..6000, 0..12_000),
            asked in prop::collection::vec(0u64..6500, 0..200),
        ) {
            let mut set = Fingerprints::default();
            let mut plain = std::collections::HashSet::new();
            for &p in &prints {
                prop_assert_eq!(set.insert(p), plain.insert(p));
                prop_assert_eq!(set.len(), plain.len());
            }
            for &p in asked.iter().chain(&prints) {
                prop_assert_eq!(set.contains(p), plain.contains(&p));
            }
            prop_assert!(set.sorted.windows(2).all(|w| w.first() < w.last()));
            prop_assert_eq!(set.is_empty(), plain.is_empty());
        }
    }
}
