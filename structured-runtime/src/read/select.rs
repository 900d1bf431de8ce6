//! Choosing among candidates: the one rule `parse_response`, `parse_value` and `repair_text`
//! share.
//!
//! Candidates are judged from the last in the text back, because a model's final answer comes
//! after its drafts and examples: the best rank wins, a tie keeps the candidate judged first (the
//! later one), and a candidate with the best possible rank ends the search, since nothing before
//! it can win.
//!
//! What a candidate is judged to (its value, its repaired text) is about its size, and the best
//! so far is held while the others are judged: two large values at once, where one is enough.
//! So a candidate longer than [`HELD_WHILE_JUDGING`] is held only by its rank while another is
//! judged, and judged again if it wins. (A fenced answer is judged as its fence and as the whole
//! text: a 100 MB one held both, 3x its size, before.)

/// The longest candidate (bytes of its text) whose judged value is held while another
/// candidate is judged; a longer one that wins is judged again.
pub(crate) const HELD_WHILE_JUDGING: usize = 1 << 20;

/// The best of `candidates` by the rank `judge` gives (lower is better; `None`: not a value at
/// all), judged from the last back; the search stops at a candidate ranked `perfect`. `len`: a
/// candidate's length, for [`HELD_WHILE_JUDGING`]; `judge` must give a candidate the same
/// rank and value each time it is asked.
pub(crate) fn best<'c, C, R: Ord, A>(
    candidates: &'c [C],
    perfect: &R,
    len: impl Fn(&C) -> usize,
    mut judge: impl FnMut(&'c C) -> Option<(R, A)>,
) -> Option<(R, A)> {
    // The best so far, held, and where it is; or, let go, its rank and where it is.
    let mut best: Option<(R, A)> = None;
    let mut best_at = 0;
    let mut let_go: Option<(R, usize)> = None;
    let long = |at: usize| {
        candidates
            .get(at)
            .is_some_and(|c| len(c) > HELD_WHILE_JUDGING)
    };
    for (at, candidate) in candidates.iter().enumerate().rev() {
        if rank_so_far(&best, &let_go).is_some_and(|r| r <= perfect) {
            break;
        }
        // Not held while another is judged: its rank is enough to compare.
        if best.is_some() && long(best_at) {
            let_go = best.take().map(|(rank, _)| (rank, best_at));
        }
        if let Some((rank, judged)) = judge(candidate) {
            if rank_so_far(&best, &let_go).is_none_or(|r| rank < *r) {
                best = Some((rank, judged));
                best_at = at;
                let_go = None;
            }
        }
    }
    match (best, let_go) {
        (Some(best), _) => Some(best),
        // (Judged again, it is what it was.)
        (None, Some((_, at))) => judge(candidates.get(at)?),
        (None, None) => None,
    }
}

/// The rank of the best so far, held or let go.
fn rank_so_far<'b, R, A>(
    best: &'b Option<(R, A)>,
    let_go: &'b Option<(R, usize)>,
) -> Option<&'b R> {
    match (best, let_go) {
        (Some((rank, _)), _) | (None, Some((rank, _))) => Some(rank),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_candidate_wins_a_tie_and_a_perfect_one_ends_the_search() {
        let mut judged = Vec::new();
        let ranks = [3, 1, 2, 1];
        let out = best(
            &[0usize, 1, 2, 3],
            &0,
            |_| 0,
            |&i| {
                judged.push(i);
                Some((ranks[i], i))
            },
        );
        assert_eq!(out, Some((1, 3)), "the later of the two ranked 1");
        assert_eq!(judged, [3, 2, 1, 0]);

        let mut judged = Vec::new();
        let out = best(
            &[5, 0, 7],
            &0,
            |_| 0,
            |&r| {
                judged.push(r);
                Some((r, r))
            },
        );
        assert_eq!(out, Some((0, 0)));
        assert_eq!(
            judged,
            [7, 0],
            "nothing before a perfect candidate is judged"
        );
        assert_eq!(best(&[1, 2], &0, |_| 0, |_| None::<(u8, ())>), None);
    }

    /// A long candidate is not held while another is judged: the winner among long ones is
    /// judged again, and is what it was; the others are judged once, the winner's value made
    /// once more only when it was let go.
    #[test]
    fn a_long_winner_is_judged_again_not_held() {
        // The winner's value and the ranks judged, in order, of candidates (length, rank).
        let run = |candidates: &[(usize, u32)]| {
            let mut judged = Vec::new();
            let out = best(
                candidates,
                &0,
                |c| c.0,
                |c| {
                    judged.push(c.1);
                    Some((c.1, format!("rank {}", c.1)))
                },
            );
            (out.map(|(_, value)| value), judged)
        };
        let long = HELD_WHILE_JUDGING + 1;
        let (out, judged) = run(&[(long, 2), (long, 1), (long, 3)]);
        assert_eq!(out.as_deref(), Some("rank 1"));
        assert_eq!(judged, [3, 1, 2, 1], "the winner let go, then judged again");
        // The winner judged last is still held: nothing judged twice.
        assert_eq!(run(&[(long, 1), (long, 2)]).1, [2, 1]);
        // A short winner is held throughout.
        assert_eq!(run(&[(long, 2), (10, 1), (long, 3)]).1, [3, 1, 2]);
    }

    use proptest::prelude::*;

    proptest! {
        /// Against the rule without letting go (the best so far held): the same winner, the
        /// same candidates judged once each, and the winner once more exactly when it is long
        /// and another was judged after it.
        #[test]
        fn letting_go_chooses_as_holding_does(
            candidates in prop::collection::vec(
                (prop::bool::ANY, prop::option::of(0u8..6)),
                0..12,
            ),
            perfect in 0u8..3,
        ) {
            let len = |c: &(bool, Option<u8>)| if c.0 { HELD_WHILE_JUDGING + 1 } else { 1 };
            // The rule holding the best so far, and the candidates it looks at.
            let (mut held, mut looked): (Option<(u8, usize)>, Vec<usize>) = (None, Vec::new());
            for (at, c) in candidates.iter().enumerate().rev() {
                if held.is_some_and(|(rank, _)| rank <= perfect) {
                    break;
                }
                looked.push(at);
                if let Some(rank) = c.1 {
                    if held.is_none_or(|(b, _)| rank < b) {
                        held = Some((rank, at));
                    }
                }
            }
            let mut judged = Vec::new();
            let out = best(&candidates, &perfect, len, |c| {
                let at = candidates.iter().position(|d| std::ptr::eq(c, d))?;
                judged.push(at);
                c.1.map(|rank| (rank, at))
            });
            prop_assert_eq!(out, held);
            let again = held.filter(|&(_, w)| {
                candidates.get(w).is_some_and(|c| c.0) && looked.last() != Some(&w)
            });
            looked.extend(again.map(|(_, w)| w));
            prop_assert_eq!(judged, looked);
        }
    }
}
