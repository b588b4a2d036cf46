//! The base every other jobboard crate stands on: instants, exact money, JSON documents and
//! closed sets of text values with their storage codecs, typed ids, the service's clock,
//! slugs and text folding, address ranges, and the read cache of rendered responses. No
//! I/O, no knowledge of resources (an id type names what it is the id of, nothing more).

#![forbid(unsafe_code)]

pub mod cache;
pub mod clock;
pub mod codec;
pub mod countries;
pub mod ids;
pub mod net;
pub mod text;
pub mod values;

pub use clock::Clock;
pub use countries::Countries;
pub use ids::{ApplicationId, CategoryId, JobId, MemberId, OrgId, UserId, WebhookId};
pub use values::{JsonDoc, Money, TextEnum, Ts};
