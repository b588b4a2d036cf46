//! Mail settings: the `[mail]` section of the configuration, its environment variables,
//! and their checks at start-up. The SMTP URL may carry a password, so neither the layer
//! nor the resolved settings ever print it (their `Debug` shows the URL redacted).

use std::{fmt, time::Duration};

use anyhow::Context;
use lettre::{AsyncSmtpTransport, Tokio1Executor, message::Mailbox};
use serde::Deserialize;

use jobboard_store::redact_url;

/// The `[mail]` layer of a configuration file, or of the environment.
#[derive(Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailLayer {
    pub smtp_url: Option<String>,
    pub from: Option<String>,
    pub retry_schedule: Option<Vec<u64>>,
    pub timeout: Option<u64>,
    pub concurrency: Option<usize>,
}

impl fmt::Debug for MailLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailLayer")
            .field("smtp_url", &self.smtp_url.as_deref().map(redact_url))
            .field("from", &self.from)
            .field("retry_schedule", &self.retry_schedule)
            .field("timeout", &self.timeout)
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl MailLayer {
    /// Applies `top` over `self`.
    pub fn overlay(mut self, top: &MailLayer) -> MailLayer {
        macro_rules! take {
            ($($f:ident),*) => { $( if top.$f.is_some() { self.$f = top.$f.clone(); } )* };
        }
        take!(smtp_url, from, retry_schedule, timeout, concurrency);
        self
    }

    /// The settings given in the environment (`JOBBOARD_SMTP_URL`, `JOBBOARD_MAIL_*`).
    pub fn from_env() -> anyhow::Result<MailLayer> {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let number = |name: &str| -> anyhow::Result<Option<u64>> {
            var(name)
                .map(|v| {
                    v.parse()
                        .map_err(|_| anyhow::anyhow!("{name} must be a whole number: {v:?}"))
                })
                .transpose()
        };
        let retry_schedule = var("JOBBOARD_MAIL_RETRY_SCHEDULE")
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().parse::<u64>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "JOBBOARD_MAIL_RETRY_SCHEDULE must be comma-separated seconds"
                        )
                    })
            })
            .transpose()?;
        Ok(MailLayer {
            smtp_url: var("JOBBOARD_SMTP_URL"),
            from: var("JOBBOARD_MAIL_FROM"),
            retry_schedule,
            timeout: number("JOBBOARD_MAIL_TIMEOUT")?,
            concurrency: number("JOBBOARD_MAIL_CONCURRENCY")?.map(|n| n as usize),
        })
    }
}

/// Resolved mail settings.
#[derive(Clone)]
pub struct MailConfig {
    /// The SMTP server, in lettre's URL form; `None` when no mail is to be sent.
    pub smtp_url: Option<String>,
    /// The sender of every mail (required with an SMTP URL).
    pub from: Option<Mailbox>,
    /// Delays after a temporary failure; after the last one a further failure is final.
    pub retry_schedule: Vec<Duration>,
    /// The most one SMTP hand-over may take, connection included.
    pub timeout: Duration,
    /// Mails handed over at once by one node.
    pub concurrency: usize,
}

impl fmt::Debug for MailConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailConfig")
            .field("smtp_url", &self.smtp_url.as_deref().map(redact_url))
            .field("from", &self.from.as_ref().map(ToString::to_string))
            .field("retry_schedule", &self.retry_schedule)
            .field("timeout", &self.timeout)
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl MailConfig {
    /// True when an SMTP server is configured, so mail is sent. Features that exist only
    /// to send mail refuse to start their work (`409`) when this is false.
    pub fn enabled(&self) -> bool {
        self.smtp_url.is_some()
    }

    /// Checks and resolves a merged layer (every field has its default in the embedded
    /// configuration file).
    pub fn resolve(l: MailLayer) -> anyhow::Result<MailConfig> {
        let smtp_url = l.smtp_url.filter(|u| !u.trim().is_empty());
        if let Some(url) = &smtp_url {
            // lettre's own parser, so every form it accepts is accepted here; its errors
            // never contain the URL, and ours show it redacted.
            AsyncSmtpTransport::<Tokio1Executor>::from_url(url).map_err(|e| {
                anyhow::anyhow!("mail.smtp_url {} is not usable: {e}", redact_url(url))
            })?;
        }
        let from = match l.from.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => Some(s.parse::<Mailbox>().with_context(|| {
                format!("mail.from {s:?} is not an address (\"Name <user@example.com>\" or \"user@example.com\")")
            })?),
            None => None,
        };
        anyhow::ensure!(
            smtp_url.is_none() || from.is_some(),
            "mail.from (JOBBOARD_MAIL_FROM) is required when mail.smtp_url is set"
        );
        let timeout = l.timeout.unwrap_or(30);
        anyhow::ensure!(timeout >= 1, "mail.timeout must be at least 1 second");
        let concurrency = l.concurrency.unwrap_or(4);
        anyhow::ensure!(concurrency >= 1, "mail.concurrency must be at least 1");
        Ok(MailConfig {
            smtp_url,
            from,
            retry_schedule: l
                .retry_schedule
                .unwrap_or_default()
                .into_iter()
                .map(Duration::from_secs)
                .collect(),
            timeout: Duration::from_secs(timeout),
            concurrency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(url: &str, from: &str) -> MailLayer {
        MailLayer {
            smtp_url: Some(url.into()),
            from: Some(from.into()),
            ..MailLayer::default()
        }
    }

    #[test]
    fn accepts_lettres_url_forms() {
        for url in [
            "smtp://127.0.0.1:2525",
            "smtp://mail.example.com?tls=required",
            "smtp://mail.example.com:587?tls=opportunistic",
            "smtps://user:secret@mail.example.com",
        ] {
            let c = MailConfig::resolve(layer(url, "Jobs <jobs@example.com>")).unwrap();
            assert!(c.enabled(), "{url}");
        }
        let c = MailConfig::resolve(MailLayer::default()).unwrap();
        assert!(!c.enabled());
    }

    #[test]
    fn refuses_bad_settings_without_showing_the_password() {
        let err = MailConfig::resolve(layer("ftp://user:secret@host", "a@example.com"))
            .unwrap_err()
            .to_string();
        assert!(!err.contains("secret"), "{err}");
        assert!(err.contains("user:***@host"), "{err}");
        assert!(MailConfig::resolve(layer("smtp://host", "not an address")).is_err());
        assert!(
            MailConfig::resolve(MailLayer {
                smtp_url: Some("smtp://host".into()),
                ..MailLayer::default()
            })
            .is_err()
        );
    }

    #[test]
    fn debug_output_hides_the_password() {
        let l = layer("smtps://user:secret@mail.example.com", "a@example.com");
        let c = MailConfig::resolve(l.clone()).unwrap();
        for shown in [format!("{l:?}"), format!("{c:?}")] {
            assert!(!shown.contains("secret"), "{shown}");
            assert!(shown.contains("user:***@mail.example.com"), "{shown}");
        }
    }
}
