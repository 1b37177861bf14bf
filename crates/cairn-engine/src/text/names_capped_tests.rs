//! A `Capped` lookup (the `possible_duplicates` hint every create pays for) reads about as much of
//! an index of 50,000 names like the query as of one of 5,000, still finds the near spelling, the
//! held name and the word of a name there, answers nothing a whole lookup would not, and answers
//! as a whole lookup wherever its caps are not reached. Steps are the `Meter`'s, never a clock.

use super::*;
use proptest::prelude::*;

const HINT: LookupOptions = LookupOptions { prefix: false, limit: 16, as_name: false };
const EVERY: LookupOptions = LookupOptions { prefix: false, limit: usize::MAX, as_name: false };

/// A word of two to four syllables, different for each `i` below 8,000.
fn word(i: usize) -> String {
    const SYL: [&str; 20] = [
        "ka", "lo", "ne", "ti", "su", "vo", "da", "ri", "be", "gu", "ho", "fi", "ze", "wu", "pa", "ju", "xi", "ye",
        "co", "mu",
    ];
    let (mut out, mut rest) = (String::new(), i);
    for k in 0..4 {
        if k >= 2 && rest == 0 {
            break;
        }
        out.push_str(SYL[rest % 20]);
        rest /= 20;
    }
    out
}

/// `n` names like `Service 12` and `n` like `Priya Kalone`, and `Priya Raman`.
fn similar(n: usize) -> NameIndex {
    let mut names: Vec<String> = (0..n).map(|i| format!("Service {i}")).collect();
    names.extend((0..n).map(|i| format!("Priya {}", word(i))));
    names.push("Priya Raman".to_owned());
    NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, n.as_str())))
}

/// The steps of the hint's two lookups of `query`.
fn steps(idx: &NameIndex, query: &str, effort: Effort) -> u64 {
    let mut meter = Meter::default();
    let _ = idx.lookup_metered(query, HINT, &mut meter, effort);
    let _ = idx.held_or_abbreviated_metered(query, 16, &mut meter, effort);
    meter.steps()
}

const QUERIES: [&str; 6] = ["Service 70001", "Servise 1234", "Priya Ramen", "Dr. Priya Raman", "Priya", "Kalone Priya"];

#[test]
fn a_capped_lookup_reads_about_as_much_of_ten_times_the_names_like_it() {
    let (few, many) = (similar(5_000), similar(50_000));
    for query in QUERIES {
        let (a, b) = (steps(&few, query, Effort::Capped), steps(&many, query, Effort::Capped));
        eprintln!(
            "{query:?}: {a} steps at 5,000 names like it, {b} at 50,000 (whole: {} and {})",
            steps(&few, query, Effort::Whole),
            steps(&many, query, Effort::Whole)
        );
        assert!(b < 2 * a.max(100), "{query:?}: {b} steps at 50,000 names like it, {a} at 5,000");
    }
}

#[test]
fn among_fifty_thousand_names_like_it_a_capped_lookup_still_finds_the_likely_one() {
    let idx = similar(50_000);
    let raman = |hits: &[NameMatch]| hits.iter().find(|m| m.name == "Priya Raman").map(|m| m.how);
    let near = idx.lookup_with("Priya Ramen", HINT, Effort::Capped);
    assert_eq!(raman(&near), Some(MatchKind::Near { distance: 1 }), "{near:?}");
    let held = idx.held_or_abbreviated_with("Dr. Priya Raman", 16, Effort::Capped);
    assert!(held.iter().any(|(_, name)| name == "Priya Raman"), "{held:?}");
    let word_of = idx.lookup_with("Priya", HINT, Effort::Capped);
    assert!(word_of.len() == 16 && word_of.iter().all(|m| m.how == MatchKind::WordOfName), "{word_of:?}");
    let typo = idx.lookup_with("Servise 1234", HINT, Effort::Capped);
    assert!(typo.len() == 16 && typo.iter().all(|m| matches!(m.how, MatchKind::Near { .. })), "{typo:?}");
    // Exact and case-folded names are never capped.
    let exact = idx.lookup_with("SERVICE 4321", HINT, Effort::Capped);
    assert_eq!((exact[0].name.as_str(), exact[0].how), ("Service 4321", MatchKind::CaseFolded));
}

#[test]
fn a_capped_lookup_answers_nothing_a_whole_one_would_not() {
    let idx = similar(5_000);
    for query in QUERIES {
        let whole: FxHashSet<(u64, MatchKind)> = idx.lookup(query, EVERY).into_iter().map(|m| (m.id, m.how)).collect();
        for m in idx.lookup_with(query, EVERY, Effort::Capped) {
            assert!(whole.contains(&(m.id, m.how)), "{query:?}: {m:?}");
        }
        let held: FxHashSet<u64> = idx.held_or_abbreviated(query, usize::MAX).into_iter().map(|(id, _)| id).collect();
        for (id, name) in idx.held_or_abbreviated_with(query, usize::MAX, Effort::Capped) {
            assert!(held.contains(&id), "{query:?}: {name}");
        }
    }
}

proptest! {
    /// Few names, many alike: the caps are not reached, and the hint's lookups answer as whole ones.
    #[test]
    fn below_its_caps_a_capped_lookup_answers_as_a_whole_one(
        names in prop::collection::vec("(ka|ri|to|ma|ne|an| |Ka|Ri)(ka|ri|to|ma|ne|an| |Ka|Ri|\\.){0,7}", 0..60),
        query in "(ka|ri|to|ma|ne|an| |Ka|Ri|\\.){1,8}",
    ) {
        let idx = NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, n.as_str())));
        for opts in [HINT, EVERY] {
            prop_assert_eq!(idx.lookup_with(&query, opts, Effort::Capped), idx.lookup(&query, opts));
        }
        prop_assert_eq!(idx.held_or_abbreviated_with(&query, 16, Effort::Capped), idx.held_or_abbreviated(&query, 16));
    }
}
