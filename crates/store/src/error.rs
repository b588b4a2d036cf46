//! The one error type of storage, sorted once where a database error enters the program:
//! a unique index refused a write, a foreign key refused it, or anything else.

/// A storage failure.
#[derive(Debug)]
pub enum StoreError {
    /// A unique index refused the write. `what` names the index (PostgreSQL) or the
    /// columns (SQLite's message), so callers that expect one can tell which field it
    /// guards.
    Unique { what: String },
    /// A foreign key refused the write: a referenced row is missing, or a row still
    /// refers to the one being deleted.
    Referenced { what: String },
    /// Anything else: the database is unreachable, a statement failed, a value did not
    /// decode. Logged, never shown to a caller.
    Other(sqlx::Error),
}

/// The result of a storage call.
pub type DbResult<T> = Result<T, StoreError>;

impl StoreError {
    pub fn is_unique(&self) -> bool {
        matches!(self, StoreError::Unique { .. })
    }

    pub fn is_referenced(&self) -> bool {
        matches!(self, StoreError::Referenced { .. })
    }

    /// True when a unique index named (or on the column) `name` refused the write.
    pub fn is_unique_on(&self, name: &str) -> bool {
        matches!(self, StoreError::Unique { what } if what.contains(name))
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(d) = &e {
            let what = format!("{} {}", d.constraint().unwrap_or(""), d.message());
            if d.is_unique_violation() {
                return StoreError::Unique { what };
            }
            if d.is_foreign_key_violation() {
                return StoreError::Referenced { what };
            }
        }
        StoreError::Other(e)
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Unique { what } => write!(f, "unique index refused the write: {what}"),
            StoreError::Referenced { what } => {
                write!(f, "foreign key refused the write: {what}")
            }
            StoreError::Other(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Other(e) => Some(e),
            _ => None,
        }
    }
}
