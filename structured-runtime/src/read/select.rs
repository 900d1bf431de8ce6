//! Choosing among candidates: the one rule `parse_response`, `parse_value` and `repair_text`
//! share.
//!
//! Candidates are judged from the last in the text back, because a model's final answer comes
//! after its drafts and examples: the best rank wins, a tie keeps the candidate judged first (the
//! later one), and a candidate with the best possible rank ends the search, since nothing before
//! it can win.

/// The best of `candidates` by the rank `judge` gives (lower is better; `None`: not a value at
/// all), judged from the last back; the search stops at a candidate ranked `perfect`.
pub(crate) fn best<'c, C, R: Ord, A>(
    candidates: &'c [C],
    perfect: &R,
    mut judge: impl FnMut(&'c C) -> Option<(R, A)>,
) -> Option<(R, A)> {
    let mut best: Option<(R, A)> = None;
    for candidate in candidates.iter().rev() {
        if best.as_ref().is_some_and(|(rank, _)| rank <= perfect) {
            break;
        }
        if let Some((rank, judged)) = judge(candidate) {
            if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                best = Some((rank, judged));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_candidate_wins_a_tie_and_a_perfect_one_ends_the_search() {
        let mut judged = Vec::new();
        let ranks = [3, 1, 2, 1];
        let out = best(&[0usize, 1, 2, 3], &0, |&i| {
            judged.push(i);
            Some((ranks[i], i))
        });
        assert_eq!(out, Some((1, 3)), "the later of the two ranked 1");
        assert_eq!(judged, [3, 2, 1, 0]);

        let mut judged = Vec::new();
        let out = best(&[5, 0, 7], &0, |&r| {
            judged.push(r);
            Some((r, r))
        });
        assert_eq!(out, Some((0, 0)));
        assert_eq!(
            judged,
            [7, 0],
            "nothing before a perfect candidate is judged"
        );
        assert_eq!(best(&[1, 2], &0, |_| None::<(u8, ())>), None);
    }
}
