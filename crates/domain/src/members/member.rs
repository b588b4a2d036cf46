//! The member's rules: when two addresses are one, the defaults of a new member, what a
//! sync changes, and the conflicts of matching by id and by address.

use serde_json::json;
use uuid::Uuid;

use super::model::{ApprovalStatus, Member, MemberSyncIn, Role};
use crate::{Error, JsonDoc, MemberId, OrgId, Ts, links};

/// True when two addresses name the same member (see [`links::email_identity`]: only
/// ASCII letters are folded, so different addresses never meet).
pub fn same_address(a: &str, b: &str) -> bool {
    links::email_identity(a) == links::email_identity(b)
}

/// The member a sync creates: the sent fields, the defaults for the others.
pub(super) fn created(org_id: OrgId, req: &MemberSyncIn, now: Ts) -> Member {
    Member {
        id: req.user_id.unwrap_or_else(|| MemberId(Uuid::now_v7())),
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
pub(super) fn local_part(email: &str) -> String {
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
        assert!(!same_address("\u{212A}ate@example.com", "kate@example.com"));
        assert!(!same_address(
            "\u{130}van@example.com",
            "i\u{307}van@example.com"
        ));
        assert!(!same_address("ÉLodie@example.com", "élodie@example.com"));
    }

    /// Why recomputing the stored identities (migration 11) cannot make two members
    /// collide: Unicode lower-casing, used before, ignores the case of ASCII letters (so
    /// equal ASCII-folded addresses were equal before) and is idempotent (so no row's new
    /// value is another row's old one), for every character and in the contexts of the
    /// final sigma rule.
    #[test]
    fn ascii_folding_is_finer_than_unicode_lower_casing() {
        let check = |s: &str| {
            let lower = s.to_lowercase();
            assert_eq!(lower.to_lowercase(), lower, "idempotent: {s:?}");
            assert_eq!(s.to_ascii_lowercase().to_lowercase(), lower, "{s:?}");
        };
        let mut buf = [0u8; 4];
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            check(c.encode_utf8(&mut buf));
        }
        for s in [
            "A\u{3A3}",
            "\u{3A3}A",
            "A\u{3A3}.B",
            "\u{391}\u{3A3}@x.com",
            "a\u{3A3}b",
        ] {
            check(s);
        }
    }
}
