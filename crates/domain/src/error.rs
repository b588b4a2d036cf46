//! Why a domain operation refused or failed. Every front door (the JSON API, the board,
//! the dashboard) renders these in its own way; the API's mapping to the error envelope
//! is `crate::http::error`.

use serde::Serialize;
use serde_json::Value;

use crate::db::StoreError;

/// One invalid field (or query parameter), named by its path (`payment.amount`,
/// `events[3].type`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub code: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            code,
            message: message.into(),
        }
    }
}

/// The outcome of a refused or failed operation. Nothing of a refused operation is stored.
#[derive(Debug)]
pub enum Error {
    /// Fields are missing, malformed, out of range, unknown, or refer to records that do
    /// not exist: every problem found, at once.
    Invalid(Vec<FieldError>),
    /// A CMS item's data does not match its collection's schema.
    Schema(Vec<FieldError>),
    /// No record of this kind with this identifier in the organization.
    NotFound(&'static str),
    /// The request contradicts stored state.
    Conflict { message: String, details: Value },
    /// The operation cannot run in this configuration (e.g. mail is not set up).
    Unavailable { code: &'static str, message: String },
    /// The storage failed.
    Store(StoreError),
    /// Something that cannot happen did (a worker panicked): logged, answered opaquely.
    Internal(&'static str),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// One invalid field.
    pub fn field(field: &str, code: &'static str, message: impl Into<String>) -> Error {
        Error::Invalid(vec![FieldError::new(field, code, message)])
    }

    pub fn conflict(message: impl Into<String>, details: Value) -> Error {
        Error::Conflict {
            message: message.into(),
            details,
        }
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Invalid(fields) | Error::Schema(fields) => {
                write!(f, "{} invalid field(s)", fields.len())
            }
            Error::NotFound(what) => write!(f, "{what} not found"),
            Error::Conflict { message, .. } | Error::Unavailable { message, .. } => {
                f.write_str(message)
            }
            Error::Store(e) => write!(f, "storage: {e}"),
            Error::Internal(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}
