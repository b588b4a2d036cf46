//! The MIME message handed to the SMTP server for a stored mail: the same mail always
//! gives the same headers (Message-ID, Date of enqueueing, sender, recipient, subject,
//! extra headers) and parts.

use std::time::SystemTime;

use lettre::message::{
    Mailbox, MultiPart, SinglePart,
    header::{HeaderName, HeaderValue},
};

use jobboard_domain::mail::store::Mail;

/// The message sent for a stored mail. The same mail always gives the same headers
/// (Message-ID, Date of enqueueing, sender, recipient, subject, extra headers) and parts.
pub fn build(mail: &Mail, from: &Mailbox) -> Result<lettre::Message, String> {
    let to: Mailbox = mail
        .to_address
        .parse()
        .map_err(|e| format!("invalid recipient: {e}"))?;
    let mut b = lettre::Message::builder()
        .message_id(Some(mail.message_id.clone()))
        .date(SystemTime::from(mail.created_at.0))
        .from(from.clone())
        .to(to)
        .subject(mail.subject.clone());
    let headers = mail.header_pairs();
    // Mails of this service are automatic: RFC 3834 asks responders not to answer them.
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("auto-submitted"))
    {
        b = b.raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".into(),
        ));
    }
    for (name, value) in headers {
        let name =
            HeaderName::new_from_ascii(name).map_err(|_| "invalid header name".to_string())?;
        b = b.raw_header(HeaderValue::new(name, value));
    }
    let built = match &mail.html_body {
        Some(html) => b.multipart(MultiPart::alternative_plain_html(
            mail.text_body.clone(),
            html.clone(),
        )),
        None => b.singlepart(SinglePart::plain(mail.text_body.clone())),
    };
    built.map_err(|e| format!("message could not be built: {e}"))
}
