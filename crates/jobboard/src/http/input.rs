//! Field getters with run-time bounds, for the request bodies not yet defined with
//! [`crate::request!`]. Prefer a request type: it documents itself.

use serde_json::{Map, Value};
use uuid::Uuid;

pub use crate::domain::{
    Field, Input, QueryInput,
    kind::{Check, check_string, free_form, parse_uuid},
    links::{is_email, is_http_url},
};
use crate::domain::{
    Mode, Ts,
    kind::{AnyJson, Email, Id, Instant, Kind, Link, Object, as_integer, type_error},
};

fn mode(required: bool) -> Mode {
    if required {
        Mode::Required
    } else {
        Mode::Nullable
    }
}

pub fn check_one_of(v: &Value, allowed: &[&str]) -> Check<String> {
    let s = v.as_str().ok_or_else(|| type_error("a string"))?;
    if allowed.contains(&s) {
        Ok(s.to_string())
    } else {
        Err((
            "invalid_value",
            format!("Must be one of: {}.", allowed.join(", ")),
        ))
    }
}

pub fn check_timestamp(v: &Value) -> Check<Ts> {
    Instant::parse(v)
}

/// Getters by name with bounds given at run time.
pub trait Getters {
    fn string(&mut self, name: &str, required: bool, min: usize, max: usize) -> Field<String>;
    fn boolean(&mut self, name: &str, required: bool) -> Field<bool>;
    fn one_of(&mut self, name: &str, required: bool, allowed: &[&str]) -> Field<String>;
    fn uuid(&mut self, name: &str, required: bool) -> Field<Uuid>;
    fn url(&mut self, name: &str, required: bool) -> Field<String>;
    fn email(&mut self, name: &str, required: bool) -> Field<String>;
    fn integer(&mut self, name: &str, required: bool, min: i64, max: i64) -> Field<i64>;
    fn number(&mut self, name: &str, required: bool, min: f64, max: f64) -> Field<f64>;
    fn timestamp(&mut self, name: &str, required: bool) -> Field<Ts>;
    fn object(&mut self, name: &str, required: bool) -> Field<Map<String, Value>>;
    fn any(&mut self, name: &str) -> Field<Value>;
    fn nested_input(&mut self, name: &str, required: bool) -> Field<Input>;
    fn field_with<T>(
        &mut self,
        name: &str,
        required: bool,
        check: impl FnOnce(&Value) -> Check<T>,
    ) -> Field<T>;
}

impl Getters for Input {
    fn string(&mut self, name: &str, required: bool, min: usize, max: usize) -> Field<String> {
        self.field(name, mode(required), |v| check_string(v, min, max))
    }
    fn boolean(&mut self, name: &str, required: bool) -> Field<bool> {
        self.read::<crate::domain::kind::Flag>(name, mode(required))
    }
    fn one_of(&mut self, name: &str, required: bool, allowed: &[&str]) -> Field<String> {
        self.field(name, mode(required), |v| check_one_of(v, allowed))
    }
    fn uuid(&mut self, name: &str, required: bool) -> Field<Uuid> {
        self.read::<Id>(name, mode(required))
    }
    fn url(&mut self, name: &str, required: bool) -> Field<String> {
        self.read::<Link>(name, mode(required))
    }
    fn email(&mut self, name: &str, required: bool) -> Field<String> {
        self.read::<Email>(name, mode(required))
    }
    fn integer(&mut self, name: &str, required: bool, min: i64, max: i64) -> Field<i64> {
        self.field(name, mode(required), |v| match as_integer(v) {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            Some(_) => Err(("out_of_range", format!("Must be between {min} and {max}."))),
            None => Err(type_error("an integer")),
        })
    }
    fn number(&mut self, name: &str, required: bool, min: f64, max: f64) -> Field<f64> {
        self.field(name, mode(required), |v| match v.as_f64() {
            Some(n) if n.is_finite() && n >= min && n <= max => Ok(n),
            Some(_) => Err(("out_of_range", format!("Must be between {min} and {max}."))),
            None => Err(type_error("a number")),
        })
    }
    fn timestamp(&mut self, name: &str, required: bool) -> Field<Ts> {
        self.read::<Instant>(name, mode(required))
    }
    fn object(&mut self, name: &str, required: bool) -> Field<Map<String, Value>> {
        self.read::<Object>(name, mode(required))
    }
    fn any(&mut self, name: &str) -> Field<Value> {
        self.read::<AnyJson>(name, Mode::Nullable)
    }
    fn nested_input(&mut self, name: &str, required: bool) -> Field<Input> {
        self.nested(name, mode(required))
    }
    fn field_with<T>(
        &mut self,
        name: &str,
        required: bool,
        check: impl FnOnce(&Value) -> Check<T>,
    ) -> Field<T> {
        self.field(name, mode(required), check)
    }
}
