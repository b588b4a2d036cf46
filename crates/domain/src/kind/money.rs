//! Kinds of money: exact amounts and currency codes.

use serde_json::Value;
use utoipa::openapi::{RefOr, Schema};

use super::{Check, Kind, Refs, number_text, string_schema, type_error};
use crate::values::Money;

/// An exact amount of money (see [`Money`]).
pub struct Cash;

impl Kind for Cash {
    type Value = Money;
    fn parse(v: &Value) -> Check<Money> {
        match number_text(v) {
            Some(text) => Money::parse(&text).map_err(|(c, m)| (c, m.to_string())),
            None => Err(type_error("a number")),
        }
    }
    fn schema() -> RefOr<Schema> {
        RefOr::Ref(utoipa::openapi::Ref::from_schema_name("Money"))
    }
    fn refs(out: &mut Refs) {
        out.push(("Money".into(), <Money as utoipa::PartialSchema>::schema()));
    }
}

/// A three-letter currency code (ISO 4217), any case, kept upper-case.
pub struct Currency;

impl Kind for Currency {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        match v.as_str() {
            Some(s) if s.len() == 3 && s.bytes().all(|b| b.is_ascii_alphabetic()) => {
                Ok(s.to_ascii_uppercase())
            }
            Some(_) => Err((
                "invalid_format",
                "Must be a three-letter currency code (ISO 4217).".to_string(),
            )),
            None => Err(type_error("a string")),
        }
    }
    fn schema() -> RefOr<Schema> {
        string_schema(3, 3).pattern(Some("^[A-Za-z]{3}$")).into()
    }
}

/// A three-letter upper-case currency code (ISO 4217), exactly as sent.
pub struct UpperCurrency;

impl Kind for UpperCurrency {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        match v.as_str() {
            Some(s) if s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase()) => {
                Ok(s.to_string())
            }
            Some(_) => Err((
                "invalid_format",
                "Must be a three-letter upper-case currency code, e.g. EUR.".to_string(),
            )),
            None => Err(type_error("a string")),
        }
    }
    fn schema() -> RefOr<Schema> {
        string_schema(3, 3).pattern(Some("^[A-Z]{3}$")).into()
    }
}
