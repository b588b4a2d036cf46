//! An SMTP server on 127.0.0.1 for tests: the `mailin` crate's SMTP state machine (command
//! parsing, replies, dot-unstuffing) behind a tokio socket loop. It records every message
//! it accepted, raw, and answers as told: a refusal code for a recipient (at `RCPT TO`, or
//! at the end of `DATA`), or holding the final reply of `DATA` until released, to stand for
//! a server that has the message but has not accepted it yet.
//!
//! As with a real server, a message counts as received only once its `250` reply was
//! written; a client that goes away before that has not delivered it.

#![allow(dead_code)]

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use mailin::{Action, Handler, Response, SessionBuilder};
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

/// Where in the dialogue a refusal is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Rcpt,
    DataEnd,
}

#[derive(Debug, Clone)]
struct Rule {
    to: String,
    stage: Stage,
    code: u16,
    /// How many more times; `None` for always.
    left: Option<usize>,
}

/// A message the server accepted.
#[derive(Debug, Clone)]
pub struct Received {
    pub from: String,
    pub to: Vec<String>,
    pub raw: Vec<u8>,
}

impl Received {
    pub fn parsed(&self) -> mail_parser::Message<'_> {
        mail_parser::MessageParser::default()
            .parse(&self.raw)
            .expect("a parsable message")
    }

    /// The first value of a header, unfolded (RFC 5322: a line break before white space
    /// is removed).
    pub fn header(&self, name: &str) -> Option<String> {
        self.parsed()
            .header_raw(name)
            .map(|v| v.replace("\r\n", "").trim().to_string())
    }

    pub fn message_id(&self) -> String {
        self.parsed()
            .message_id()
            .expect("a Message-ID")
            .to_string()
    }
}

#[derive(Default)]
struct Inner {
    received: Vec<Received>,
    rules: Vec<Rule>,
    rcpt_attempts: HashMap<String, usize>,
    hold: bool,
    held: usize,
}

#[derive(Default)]
struct Shared {
    inner: Mutex<Inner>,
    changed: tokio::sync::Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The refusal for `to` at `stage`, if a rule has one left.
    fn refusal(&self, to: &str, stage: Stage) -> Option<u16> {
        let mut inner = self.lock();
        let rule = inner.rules.iter_mut().find(|r| {
            r.stage == stage && r.to.eq_ignore_ascii_case(to) && r.left.is_none_or(|n| n > 0)
        })?;
        if let Some(n) = &mut rule.left {
            *n -= 1;
        }
        Some(rule.code)
    }
}

/// One connection's view of the dialogue, fed by mailin.
struct Conn {
    shared: Arc<Shared>,
    from: String,
    to: Vec<String>,
    data: Vec<u8>,
    /// A message whose `DATA` ended well, waiting for its reply to be written.
    done: Arc<Mutex<Option<Received>>>,
}

fn refusal_text(code: u16) -> String {
    if code < 500 {
        "Try again later".into()
    } else {
        "Refused".into()
    }
}

impl Handler for Conn {
    fn mail(&mut self, _ip: IpAddr, _domain: &str, from: &str) -> Response {
        self.from = from.to_string();
        self.to.clear();
        mailin::response::OK
    }

    fn rcpt(&mut self, to: &str) -> Response {
        *self
            .shared
            .lock()
            .rcpt_attempts
            .entry(to.to_ascii_lowercase())
            .or_default() += 1;
        self.shared.changed.notify_waiters();
        if let Some(code) = self.shared.refusal(to, Stage::Rcpt) {
            return Response::custom(code, refusal_text(code));
        }
        self.to.push(to.to_string());
        mailin::response::OK
    }

    fn data_start(&mut self, _domain: &str, _from: &str, _8bit: bool, _to: &[String]) -> Response {
        self.data.clear();
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.data.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        for to in &self.to {
            if let Some(code) = self.shared.refusal(to, Stage::DataEnd) {
                return Response::custom(code, refusal_text(code));
            }
        }
        *self.done.lock().unwrap() = Some(Received {
            from: self.from.clone(),
            to: self.to.clone(),
            raw: std::mem::take(&mut self.data),
        });
        mailin::response::OK
    }
}

/// The running server; stopped when dropped.
pub struct SmtpSink {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn({
            let shared = shared.clone();
            async move {
                let mut conns = tokio::task::JoinSet::new();
                while let Ok((stream, peer)) = listener.accept().await {
                    conns.spawn(serve(stream, peer.ip(), shared.clone()));
                    while conns.try_join_next().is_some() {}
                }
            }
        });
        SmtpSink { addr, shared, task }
    }

    /// The `mail.smtp_url` reaching this server.
    pub fn url(&self) -> String {
        format!("smtp://{}", self.addr)
    }

    /// Answers `code` to `RCPT TO:<to>` the next `times` times (`None`: always).
    pub fn refuse(&self, to: &str, code: u16, times: Option<usize>) {
        self.refuse_at(Stage::Rcpt, to, code, times);
    }

    /// Answers `code` at `stage` for messages to `to`, the next `times` times.
    pub fn refuse_at(&self, stage: Stage, to: &str, code: u16, times: Option<usize>) {
        self.shared.lock().rules.push(Rule {
            to: to.to_string(),
            stage,
            code,
            left: times,
        });
    }

    /// From now on, holds the final reply of every `DATA` until [`SmtpSink::release`].
    pub fn hold(&self) {
        self.shared.lock().hold = true;
    }

    pub fn release(&self) {
        self.shared.lock().hold = false;
        self.shared.changed.notify_waiters();
    }

    /// Messages whose final reply is being held.
    pub fn held(&self) -> usize {
        self.shared.lock().held
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.lock().received.clone()
    }

    /// How often `RCPT TO` named this address (every hand-over tried names it once).
    pub fn rcpt_attempts(&self, to: &str) -> usize {
        self.shared
            .lock()
            .rcpt_attempts
            .get(&to.to_ascii_lowercase())
            .copied()
            .unwrap_or(0)
    }

    /// Waits (up to `limit`) until `done` holds for the server's state; returns whether it
    /// did.
    pub async fn wait_until(&self, limit: Duration, done: impl Fn(&SmtpSink) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.shared.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if done(self) {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return done(self);
            }
        }
    }
}

/// One SMTP session: lines in, mailin's replies out.
async fn serve(stream: TcpStream, peer: IpAddr, shared: Arc<Shared>) {
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let done = Arc::new(Mutex::new(None));
    let conn = Conn {
        shared: shared.clone(),
        from: String::new(),
        to: Vec::new(),
        data: Vec::new(),
        done: done.clone(),
    };
    let mut session = SessionBuilder::new("sink.test").build(peer, conn);
    if write(&mut wr, &session.greeting()).await.is_err() {
        return;
    }
    let mut in_data = false;
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        match rd.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let res = session.process(&line);
        if res.action == Action::NoReply {
            continue;
        }
        let ends_data = std::mem::replace(&mut in_data, res.code == 354);
        let accepted = done.lock().unwrap().take();
        if let Some(message) = accepted {
            if !hold_reply(&shared, &mut rd).await {
                return;
            }
            if write(&mut wr, &res).await.is_err() {
                return;
            }
            shared.lock().received.push(message);
            shared.changed.notify_waiters();
            continue;
        }
        if write(&mut wr, &res).await.is_err() || res.action == Action::Close {
            return;
        }
        if ends_data && res.is_error {
            // mailin would stay in its DATA state after refusing a message; a real server
            // ends the transaction. Closing the connection is the simplest faithful end.
            return;
        }
    }
}

/// While holding is on, waits for a release; false when the client went away meanwhile.
async fn hold_reply(shared: &Shared, rd: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> bool {
    let mut counted = false;
    let result = loop {
        let released = shared.changed.notified();
        tokio::pin!(released);
        released.as_mut().enable();
        if !shared.lock().hold {
            break true;
        }
        if !counted {
            counted = true;
            shared.lock().held += 1;
            shared.changed.notify_waiters();
        }
        let mut byte = [0u8; 1];
        tokio::select! {
            _ = &mut released => {}
            // The client waits for our reply; anything read here means it went away.
            _ = rd.read(&mut byte) => break false,
        }
    };
    if counted {
        shared.lock().held -= 1;
        shared.changed.notify_waiters();
    }
    result
}

async fn write(wr: &mut tokio::net::tcp::OwnedWriteHalf, res: &Response) -> std::io::Result<()> {
    wr.write_all(&res.buffer()?).await?;
    wr.flush().await
}
