//! Mail as the operations make it: a message ([`message::Message`]) written into the
//! mail outbox in the transaction of the change that causes it ([`store::enqueue`]), and
//! the daily cap on the mails anyone can ask for. The SMTP worker that delivers them
//! belongs to the server.

pub mod message;
pub mod store;

pub use message::Message;
pub use store::{EnqueueError, Mail, Status, enqueue};
