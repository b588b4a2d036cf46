//! What tells an in-process copy of stored data that it may be stale: the count of the
//! writes this process committed (see [`committed_writes`], and [`crate::reuse`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::Pool;

/// Writes this process has committed, on any database (see [`committed_writes`]).
static WRITES: AtomicU64 = AtomicU64::new(0);

/// A number that changes after every write this process commits on any of its databases
/// (a [`crate::Tx`] committed, or a statement run through [`crate::Db::writer`]), never
/// before the write is visible to readers. An in-process copy of data read when this
/// number was `n` is current while it is still `n` and nothing outside the process
/// (another node, another command) wrote.
pub fn committed_writes() -> u64 {
    WRITES.load(Ordering::Acquire)
}

pub(crate) fn wrote() {
    WRITES.fetch_add(1, Ordering::AcqRel);
}

/// The write pool of a [`crate::Db`], lent for statements: when it is dropped (after the
/// statements run through it have completed) [`committed_writes`] changes.
pub struct Writer<'a>(pub(crate) &'a Pool);

impl std::ops::Deref for Writer<'_> {
    type Target = Pool;

    fn deref(&self) -> &Pool {
        self.0
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        wrote();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, dispatch, dispatch_tx};

    #[tokio::test]
    async fn committed_writes_change_once_a_write_is_visible() {
        let dir = std::env::temp_dir().join(format!("jobboard-writes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("w.db").display());
        let db = Db::connect(&url, 2).await.unwrap();
        dispatch!(db.writer(), p => {
            sqlx::query("CREATE TABLE t (n INTEGER)").execute(p).await.unwrap();
        });
        let read = || async {
            dispatch!(db.reader(), p => {
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM t").fetch_one(p).await.unwrap()
            })
        };
        // A transaction: the number moves when it has committed, not before.
        let before = committed_writes();
        let mut tx = db.begin().await.unwrap();
        dispatch_tx!(tx, t => {
            sqlx::query("INSERT INTO t VALUES (1)").execute(&mut **t).await.unwrap();
        });
        assert_eq!(read().await, 0);
        tx.commit().await.unwrap();
        let after_tx = committed_writes();
        assert!(after_tx > before);
        assert_eq!(read().await, 1);
        // A statement on the writer: the number moves once the statement has run.
        let writer = db.writer();
        dispatch!(writer, p => {
            sqlx::query("INSERT INTO t VALUES (2)").execute(p).await.unwrap();
        });
        assert_eq!(read().await, 2);
        drop(writer);
        assert!(committed_writes() > after_tx);
        db.close().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
