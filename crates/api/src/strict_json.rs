//! The JSON reader of request bodies: the same `serde_json::Value` as `serde_json` builds
//! (object keys in order, numbers with their exact text under `arbitrary_precision`),
//! except that an object with the same key twice is an error at any depth, where
//! `serde_json` silently keeps the last value. A body saying `"status"` twice has no one
//! meaning, and a proxy or a validator reading the first value would disagree with us.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The key under which `serde_json` hands a number to a visitor as a one-entry map when
/// `arbitrary_precision` is on (its own `Value` visitor recognises it the same way).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Parses one JSON document. Errors carry the line and column (for a repeated key: just
/// after it).
pub fn from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = StrictValue.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        StrictValue.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(mut key) = map.next_key::<String>()? else {
            return Ok(Value::Object(Map::new()));
        };
        if key == NUMBER_TOKEN {
            let text: String = map.next_value()?;
            return text
                .parse::<Number>()
                .map(Value::Number)
                .map_err(de::Error::custom);
        }
        let mut object = Map::new();
        loop {
            let value = map.next_value_seed(StrictValue)?;
            object.insert(key, value);
            match map.next_key::<String>()? {
                None => return Ok(Value::Object(object)),
                // Checked before the value is read, so the error points at the key.
                Some(k) if object.contains_key(&k) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key {}",
                        Shown(&k)
                    )));
                }
                Some(k) => key = k,
            }
        }
    }
}

/// A key as quoted in an error: escaped, and cut after 64 characters.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0.char_indices().nth(64) {
            Some((cut, _)) => write!(f, "{:?}...", &self.0[..cut]),
            None => write!(f, "{:?}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_what_serde_json_builds() {
        for doc in [
            r#"{"a": 1, "b": [true, null, "x\u00e9"], "c": {"d": {}}, "e": []}"#,
            r#"[{"a": 1}, {"a": 2}]"#,
            r#"{"x": {"k": 1}, "y": {"k": 1}}"#,
            r#""text""#,
            "-0",
        ] {
            assert_eq!(
                from_slice(doc.as_bytes()).unwrap(),
                serde_json::from_str::<Value>(doc).unwrap(),
                "{doc}"
            );
        }
    }

    #[test]
    fn numbers_keep_their_exact_text() {
        let doc = r#"{"amount":99999999999.9999,"price":19.90,"big":123456789012345678901234567890,"tiny":1e-400,"neg":-0.0,"list":[0.1,2e+3]}"#;
        let v = from_slice(doc.as_bytes()).unwrap();
        assert_eq!(v.to_string(), doc);
        assert_eq!(v["price"].to_string(), "19.90");
        // As serde_json itself, an exponent's `E` is kept as `e`.
        assert_eq!(
            from_slice(b"[2E+3]").unwrap(),
            serde_json::from_str::<Value>("[2E+3]").unwrap()
        );
    }

    #[test]
    fn a_repeated_key_is_refused_at_any_depth_with_its_position() {
        let e = from_slice(br#"{"status":"draft","status":"active"}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key \"status\""), "{e}");
        // The position is the repeated key's closing quote.
        assert_eq!((e.line(), e.column()), (1, 26));
        let nested = b"{\"a\": [1, {\"b\": {\n  \"c\": 1,\n  \"c\": 2}}]}";
        let e = from_slice(nested).unwrap_err();
        assert!(e.to_string().contains("duplicate key \"c\""), "{e}");
        assert_eq!((e.line(), e.column()), (3, 5));
        // Keys are compared after unescaping: "\u0061" is "a".
        assert!(from_slice(br#"{"a": 1, "\u0061": 2}"#).is_err());
        // A long key is cut in the message.
        let long = format!(r#"{{"{k}": 1, "{k}": 2}}"#, k = "k".repeat(1000));
        let e = from_slice(long.as_bytes()).unwrap_err().to_string();
        assert!(e.len() < 200, "{e}");
        // Other syntax errors are unchanged.
        assert!(from_slice(b"{\"a\": 1,}").is_err());
        assert!(from_slice(b"{\"a\": 1} x").is_err());
    }
}
