//! Kinds of places: countries and lists of them.

use serde_json::Value;
use utoipa::openapi::{RefOr, Schema, schema::ArrayBuilder};

use super::{Check, Kind, string_schema, type_error};
use crate::{Countries, countries};

/// A country: its ISO 3166-1 alpha-2 code in any case, kept upper-case.
pub struct Country;

fn not_a_country(s: &str) -> (&'static str, String) {
    (
        "invalid_value",
        format!("{s:?} is not a country's two-letter code (ISO 3166-1 alpha-2), such as DE or US."),
    )
}

impl Kind for Country {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = v.as_str().ok_or_else(|| type_error("a string"))?;
        countries::code(s)
            .map(str::to_string)
            .ok_or_else(|| not_a_country(s))
    }
    fn schema() -> RefOr<Schema> {
        string_schema(2, 2).pattern(Some("^[A-Za-z]{2}$")).into()
    }
}

/// A list of countries: an array of ISO 3166-1 alpha-2 codes in any case, kept
/// upper-case, each once, in the order sent. An empty array counts as none.
pub struct CountryList;

impl Kind for CountryList {
    type Value = Countries;
    fn parse(v: &Value) -> Check<Countries> {
        let items = v
            .as_array()
            .ok_or_else(|| type_error("an array of country codes"))?;
        if items.len() > countries::COUNTRIES.len() {
            return Err((
                "too_long",
                format!(
                    "Must name at most {} countries.",
                    countries::COUNTRIES.len()
                ),
            ));
        }
        let mut out: Vec<String> = Vec::with_capacity(items.len());
        for item in items {
            let s = item
                .as_str()
                .ok_or_else(|| type_error("an array of country codes"))?;
            let code = countries::code(s).ok_or_else(|| not_a_country(s))?;
            if !out.iter().any(|c| c == code) {
                out.push(code.to_string());
            }
        }
        Ok(Countries(out))
    }
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(string_schema(2, 2).pattern(Some("^[A-Za-z]{2}$")))
            .max_items(Some(countries::COUNTRIES.len()))
            .into()
    }
    fn is_blank(v: &Countries) -> bool {
        v.is_empty()
    }
}
