//! Property test of valid time: whatever order the user states "the subject's `lives_in` is X
//! from date D" (`relate` with `replaces`), `valid_at` answers the statement with the latest start
//! at or before the instant (a later call winning a tie), exactly once, and a plain recall (no
//! `as_of`, no `valid_at`) answers what `valid_at` = the call's time answers: what is true now, the
//! interval the user stated, not the order of the calls. Restating the place already in force at
//! the stated date adds nothing (it was already said).

use super::testing::{TODAY, call, caller, fresh};
use super::valid::instant;
use proptest::prelude::*;
use serde_json::json;

const PLACES: [&str; 3] = ["Paris", "Berlin", "Rome"];

/// The objects a recall of Ana at call time `now` answers (`valid_at` unset: a plain recall).
fn answers(store: &crate::store::Store, now: i64, valid_at: Option<String>) -> Vec<String> {
    let mut body = json!({"subject": "Ana"});
    if let Some(at) = valid_at {
        body["valid_at"] = json!(at);
    }
    let reply = call(store, &caller(now), "recall", &body).unwrap();
    reply["facts"]
        .as_array()
        .map_or_else(Vec::new, |facts| facts.iter().map(|f| f["object"].as_str().unwrap().to_owned()).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn valid_at_answers_the_interval_the_user_stated(
        said in prop::collection::vec((0..PLACES.len(), 0..8i32), 1..8)
    ) {
        let (_dir, store, _part) = fresh();
        // The statement in force in `year` among `kept` (calls in order): latest start at or
        // before it, a later call winning a tie.
        let in_force = |kept: &[(usize, i32)], year: i32| {
            kept.iter().enumerate().filter(|(_, s)| s.1 <= year).max_by_key(|(i, s)| (s.1, *i)).map(|(_, s)| PLACES[s.0].to_owned())
        };
        let mut kept: Vec<(usize, i32)> = Vec::new();
        for (i, &(place, year)) in said.iter().enumerate() {
            if in_force(&kept, year).as_deref() != Some(PLACES[place]) {
                kept.push((place, year));
            }
            let body = json!({
                "from": "Ana", "to": PLACES[place], "type": "lives_in", "replaces": true,
                "date": format!("{}-01-01", 2010 + year),
            });
            call(&store, &caller(i64::try_from(i).unwrap() + 1), "relate", &body).unwrap();
        }
        for year in -1..9 {
            let want: Vec<String> = in_force(&kept, year).into_iter().collect();
            for day in ["01-01", "06-15"] {
                let at = format!("{}-{day}", 2010 + year);
                prop_assert_eq!(answers(&store, TODAY, Some(at.clone())), want.clone(), "valid_at {} after {:?}", at, said);
                // Called at that instant, a plain recall means it: older news and dates yet to
                // come read as they are true then, not as the calls were made.
                let now = instant(&at).unwrap();
                prop_assert_eq!(answers(&store, now, None), want.clone(), "plain recall at {} after {:?}", at, said);
            }
        }
        let last: Vec<String> = in_force(&kept, i32::MAX).into_iter().collect();
        prop_assert_eq!(answers(&store, TODAY, None), last, "today after {:?}", said);
    }
}
