//! Which indexes make room for a new one.

use super::{Held, victims};

fn held(uses: u64, used: u64, bytes: usize) -> Held {
    Held { uses, used, bytes }
}

#[test]
fn an_index_that_fits_drops_nothing() {
    let h = [held(5, 1, 100), held(1, 2, 100)];
    assert_eq!(victims(&h, 100, 300, Some(1)), Some(vec![]));
    assert_eq!(victims(&[], 300, 300, Some(0)), Some(vec![]));
}

#[test]
fn the_least_used_go_first_and_the_least_recently_used_among_equals() {
    // Used 9, 2, 2 and 4 times; of the two used twice, the second was used longer ago.
    let h = [
        held(9, 1, 100),
        held(2, 8, 100),
        held(2, 3, 100),
        held(4, 2, 100),
    ];
    assert_eq!(victims(&h, 100, 400, Some(3)), Some(vec![2]));
    assert_eq!(victims(&h, 200, 400, Some(3)), Some(vec![2, 1]));
    // Room for 300 bytes would drop the index used 4 times: not for one used 3 times,
    // for one used 4 times (equals make room for each other), and always when asked.
    assert_eq!(victims(&h, 300, 400, Some(3)), None);
    assert_eq!(victims(&h, 300, 400, Some(4)), Some(vec![2, 1, 3]));
    assert_eq!(victims(&h, 300, 400, None), Some(vec![2, 1, 3]));
}

#[test]
fn a_large_index_drops_as_many_as_it_needs() {
    let h = [held(0, 1, 50), held(0, 2, 50), held(0, 3, 500)];
    assert_eq!(victims(&h, 560, 600, Some(0)), Some(vec![0, 1, 2]));
}
