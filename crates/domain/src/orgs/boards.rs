//! The boards this node answered lately, by host: a board page needs its organization and
//! the version of everything the page is rendered from before anything else, and reading
//! them from the database on every request was most of what a cached page cost. Reused
//! as [`jobboard_store::reuse`] says: until this process writes, and for at most a second
//! on SQLite; never on PostgreSQL.

use std::sync::LazyLock;

use super::{Board, store};
use crate::{Result, db::Db};
use jobboard_store::reuse::Reused;

/// Hosts remembered at most (a request may name any host).
const MAX_HOSTS: usize = 10_000;

static BOARDS: LazyLock<Reused<String, Board>> = LazyLock::new(|| Reused::new(MAX_HOSTS));

/// The board `host` (lower-case) reaches.
pub(super) async fn for_host(db: &Db, host: String) -> Result<Option<Board>> {
    Ok(BOARDS
        .get(db, host, |host| async move {
            store::board_for_host(db, &host).await
        })
        .await?)
}
