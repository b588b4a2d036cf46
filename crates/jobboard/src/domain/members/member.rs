//! The member's rules: when two addresses are one, the defaults of a new member, what a
//! sync changes, and the conflicts of matching by id and by address.

use serde_json::json;
use uuid::Uuid;

use super::model::{ApprovalStatus, Member, MemberSyncIn, Role};
use crate::domain::{Error, JsonDoc, Ts};

/// True when two addresses name the same member: equal once lower-cased.
pub fn same_address(a: &str, b: &str) -> bool {
    identity(a) == identity(b)
}

/// The case-insensitive form of an address, stored in `email_lower` (computed here, so
/// both backends fold alike).
pub(super) fn identity(email: &str) -> String {
    email.to_lowercase()
}

/// The member a sync creates: the sent fields, the defaults for the others.
pub(super) fn created(org_id: i64, req: &MemberSyncIn, now: Ts) -> Member {
    Member {
        id: req.user_id.unwrap_or_else(Uuid::now_v7),
        organization_id: org_id,
        email: req.email.clone(),
        name: req.name.clone().unwrap_or_else(|| local_part(&req.email)),
        role: req.role.unwrap_or(Role::Jobseeker),
        approval_status: req.approval_status.unwrap_or(ApprovalStatus::Approved),
        profile_picture: req.profile_picture.clone().opt(),
        description: req.description.clone().opt(),
        custom_fields: req.custom_fields.clone().opt().map(JsonDoc::object),
        created_at: now,
        updated_at: now,
    }
}

/// The stored member with the sync applied: the email as sent, sent fields replacing the
/// stored ones, `null` clearing the nullable ones, omitted fields kept.
pub(super) fn updated(stored: &Member, req: &MemberSyncIn) -> Member {
    let mut m = stored.clone();
    m.email = req.email.clone();
    if let Some(v) = &req.name {
        m.name = v.clone();
    }
    if let Some(v) = req.role {
        m.role = v;
    }
    if let Some(v) = req.approval_status {
        m.approval_status = v;
    }
    if let Some(v) = req.profile_picture.clone().patch() {
        m.profile_picture = v;
    }
    if let Some(v) = req.description.clone().patch() {
        m.description = v;
    }
    if let Some(v) = req.custom_fields.clone().patch() {
        m.custom_fields = v.map(JsonDoc::object);
    }
    m
}

/// The part of an address before the at-sign: the default name.
fn local_part(email: &str) -> String {
    email.split('@').next().unwrap_or(email).to_string()
}

/// The member found by `userId` cannot take an address another member holds.
pub(super) fn email_taken(owner: &Member) -> Error {
    Error::conflict(
        format!(
            "The email is already used by another member ({}).",
            owner.id
        ),
        json!({ "field": "email" }),
    )
}

/// The member found by address has another id than the `userId` sent.
pub(super) fn user_id_differs(found: &Member) -> Error {
    Error::conflict(
        format!(
            "A member with this email exists with a different userId ({}).",
            found.id
        ),
        json!({ "field": "userId" }),
    )
}

/// A concurrent change won the race on the member's address twice in a row.
pub(super) fn raced() -> Error {
    Error::conflict(
        "A concurrent change conflicted with this sync; retry it.",
        json!({ "field": "email" }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_identity() {
        assert_eq!(local_part("Jane.Doe+x@example.com"), "Jane.Doe+x");
        assert!(same_address("Kate@Example.COM", "kate@example.com"));
        assert_eq!(identity("ÉLodie@Example.COM"), "élodie@example.com");
    }
}
