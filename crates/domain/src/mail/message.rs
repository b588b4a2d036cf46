//! Mail messages: what callers queue, checked before it is stored (so a bad address or
//! header fails in the caller's transaction, not hours later in the worker), and their
//! Message-IDs. The MIME message of a hand-over is built by the mail worker.

use std::sync::RwLock;

use lettre::message::Mailbox;
use uuid::Uuid;

/// Most bytes of a text or an HTML body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Most characters of a subject.
pub const MAX_SUBJECT_CHARS: usize = 998;
/// Most extra headers of one mail, and characters of one header value.
pub const MAX_HEADERS: usize = 20;
pub const MAX_HEADER_VALUE_CHARS: usize = 2000;

/// Headers the service writes itself; callers cannot set them.
const RESERVED_HEADERS: &[&str] = &[
    "from",
    "sender",
    "to",
    "cc",
    "bcc",
    "reply-to",
    "subject",
    "date",
    "message-id",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "content-disposition",
    "return-path",
    "received",
];

/// One mail to queue: its recipient, subject, a text part, an optional HTML part (sent
/// together as `multipart/alternative`) and extra headers such as `List-Unsubscribe`.
/// The sender is the configured `mail.from`.
#[derive(Debug, Clone)]
pub struct Message {
    /// What the mail is, e.g. `job_alert` (lower-case letters, digits, `_`, `.`, `-`).
    pub kind: String,
    /// The recipient: `user@example.com` or `Name <user@example.com>`.
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: Option<String>,
    /// Extra headers, name and value (printable, one line each).
    pub headers: Vec<(String, String)>,
}

impl Message {
    pub fn new(
        kind: impl Into<String>,
        to: impl Into<String>,
        subject: impl Into<String>,
        text: impl Into<String>,
    ) -> Message {
        Message {
            kind: kind.into(),
            to: to.into(),
            subject: one_line(&subject.into()),
            text: text.into(),
            html: None,
            headers: Vec::new(),
        }
    }

    /// Adds an HTML part (escape what goes into it: it is sent as given).
    pub fn html(mut self, html: impl Into<String>) -> Message {
        self.html = Some(html.into());
        self
    }

    /// Adds an extra header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Message {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The identity of the recipient's address (see
    /// [`crate::links::email_identity`]); `None` when `to` is no mailbox.
    pub fn recipient_identity(&self) -> Option<String> {
        let mailbox: Mailbox = self.to.trim().parse().ok()?;
        Some(crate::links::email_identity(mailbox.email.as_ref()))
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let kind_ok = (1..=64).contains(&self.kind.len())
            && self
                .kind
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b));
        if !kind_ok {
            return Err("kind must be 1 to 64 lower-case letters, digits, '_', '.' or '-'".into());
        }
        if self.to.len() > 320 || has_control(&self.to) {
            return Err("to is not an address".into());
        }
        self.to
            .parse::<Mailbox>()
            .map_err(|e| format!("to is not an address: {e}"))?;
        if self.subject.trim().is_empty()
            || self.subject.chars().count() > MAX_SUBJECT_CHARS
            || has_control(&self.subject)
        {
            return Err(format!(
                "subject must be one line of 1 to {MAX_SUBJECT_CHARS} characters"
            ));
        }
        if self.text.trim().is_empty() || self.text.len() > MAX_BODY_BYTES {
            return Err(format!("text must be 1 to {MAX_BODY_BYTES} bytes"));
        }
        if self
            .html
            .as_ref()
            .is_some_and(|h| h.trim().is_empty() || h.len() > MAX_BODY_BYTES)
        {
            return Err(format!("html must be 1 to {MAX_BODY_BYTES} bytes"));
        }
        if self.headers.len() > MAX_HEADERS {
            return Err(format!("at most {MAX_HEADERS} extra headers"));
        }
        for (i, (name, value)) in self.headers.iter().enumerate() {
            let name_ok = (1..=76).contains(&name.len())
                && name.starts_with(|c: char| c.is_ascii_alphabetic())
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !name_ok {
                return Err(format!("header name {name:?} is not allowed"));
            }
            if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(format!("header {name} is set by the service"));
            }
            if self.headers[..i]
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                return Err(format!("header {name} is given twice"));
            }
            // No line breaks or other control characters: no header can be injected.
            if value.trim().is_empty()
                || value.chars().count() > MAX_HEADER_VALUE_CHARS
                || has_control(value)
            {
                return Err(format!(
                    "header {name} must have one line of 1 to {MAX_HEADER_VALUE_CHARS} characters"
                ));
            }
        }
        Ok(())
    }
}

/// `s` as one line: each run of line breaks and other control characters becomes one
/// space. Subjects are made from stored text (a job title, an applicant's name, a board's
/// name); text stored before single-line fields refused line breaks must still make a
/// mail, not a refused one.
pub fn one_line(s: &str) -> String {
    s.split(crate::kind::breaks_line)
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

/// The right-hand side of new Message-IDs: the domain of `mail.from`.
static MESSAGE_ID_DOMAIN: RwLock<String> = RwLock::new(String::new());

/// Sets the domain of the Message-IDs generated from now on (from the configured sender,
/// at start-up).
pub fn set_message_id_domain(from: Option<&Mailbox>) {
    if let Some(m) = from {
        *MESSAGE_ID_DOMAIN.write().unwrap_or_else(|e| e.into_inner()) =
            m.email.domain().to_ascii_lowercase();
    }
}

/// `<id@domain>` for the mail with this id: unique (the id is), and stored with the mail,
/// so every attempt sends the same one.
pub fn message_id(id: Uuid) -> String {
    let domain = MESSAGE_ID_DOMAIN.read().unwrap_or_else(|e| e.into_inner());
    let domain = if domain.is_empty() {
        "localhost"
    } else {
        domain.as_str()
    };
    format!("<{}@{domain}>", id.simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Message {
        Message::new("test", "Ada <ada@example.com>", "Hello", "Hi there")
            .html("<p>Hi there</p>")
            .header("List-Unsubscribe", "<https://example.com/u/1>")
    }

    #[test]
    fn accepts_a_complete_message() {
        assert_eq!(ok().validate(), Ok(()));
        assert_eq!(
            Message::new("job_alert", "ada@example.com", "Ünïcode ✓", "x").validate(),
            Ok(())
        );
    }

    #[test]
    fn refuses_injection_and_bad_fields() {
        let bad = [
            ok().header("X-Evil", "a\r\nBcc: victim@example.com"),
            Message {
                subject: "Hi\r\nBcc: victim@example.com".into(),
                ..ok()
            },
            Message {
                to: "ada@example.com\r\nBcc: victim@example.com".into(),
                ..ok()
            },
            Message {
                to: "ada@example.com, bob@example.com".into(),
                ..ok()
            },
            Message {
                to: "not an address".into(),
                ..ok()
            },
            ok().header("Bcc", "victim@example.com"),
            ok().header("message-id", "<x@y>"),
            ok().header("Bad Name", "x"),
            ok().header("list-unsubscribe", "<https://example.com/u/2>"),
            Message {
                kind: "Job Alert".into(),
                ..ok()
            },
            Message {
                subject: " ".into(),
                ..ok()
            },
            Message {
                text: "".into(),
                ..ok()
            },
            Message {
                text: "x".repeat(MAX_BODY_BYTES + 1),
                ..ok()
            },
        ];
        for m in bad {
            assert!(m.validate().is_err(), "{m:?}");
        }
    }

    #[test]
    fn subjects_from_stored_text_are_made_one_line() {
        assert_eq!(
            one_line("New job: Rust engineer\r\nsecond line"),
            "New job: Rust engineer second line"
        );
        assert_eq!(one_line("a \n b"), "a b");
        assert_eq!(one_line("\u{2028}a\u{85}\u{85}b\t"), "a b");
        let m = Message::new(
            "job_alert",
            "ada@example.com",
            "Title\nBcc: victim@example.com",
            "x",
        );
        assert_eq!(m.subject, "Title Bcc: victim@example.com");
        assert!(m.validate().is_ok());
    }
}
