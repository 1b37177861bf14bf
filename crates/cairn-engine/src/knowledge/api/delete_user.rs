//! `delete_user`: forgets every scope the caller's tenant and user ever wrote (DESIGN.md §1: a
//! user's memory can be removed whole). Reply: `{state, scopes: [{scope, forgotten}]}`; again →
//! `already_forgotten`; a user with nothing stored → `NOT_FOUND`. The scope of the caller's
//! partition is ignored. Each scope goes whole (`forget_scope`): knowledge, notes, handoffs and
//! their history, each counted in its `forgotten`. The scope list is not re-registered (that
//! would list a scope of a deleted user); the one `forget` event lands in the caller's retired
//! partition (`Partition::retired`, named by a digest) as the audit of the deletion.

use super::{Caller, Refusal};
use crate::error::Result;
use crate::history::{Change, record};
use crate::knowledge::{UserDeleted, delete_user};
use crate::store::Store;
use serde_json::{Map, Value, json};

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    // The body carries nothing the engine needs; it must still be a JSON object.
    let _: Map<String, Value> = super::parse("delete_user", body)?;
    let caller = caller.clone();
    let (deleted, _) = store.write(move |tx| {
        let (tenant, user, _) = caller.part.parts();
        let deleted = delete_user(tx, tenant, user, caller.now)?;
        if let UserDeleted::Deleted(scopes) = &deleted {
            let after = json!({ "scopes": scopes.len() });
            // Kept where a forgotten scope keeps its keepsakes (`forget::retire`): no key left
            // spells the user.
            let retired = Caller { part: caller.part.retired(), ..caller.clone() };
            record(
                tx,
                &retired,
                Change {
                    family: "forget",
                    target: "user",
                    op: "delete_user",
                    before: None,
                    after: Some(after),
                    patch: None,
                },
            )?;
        }
        Ok(deleted)
    })?;
    Ok(match deleted {
        UserDeleted::Deleted(scopes) => json!({
            "state": "forgotten",
            "scopes": scopes.into_iter().map(|(scope, counts)| json!({ "scope": scope, "forgotten": counts })).collect::<Vec<_>>(),
        }),
        UserDeleted::AlreadyForgotten => json!({ "state": "already_forgotten" }),
        UserDeleted::NotFound => {
            Refusal { code: "NOT_FOUND", message: "nothing is stored for this user".into(), details: Vec::new() }
                .reply()
        }
    })
}
