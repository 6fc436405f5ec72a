//! Errors in a scenario, and the helpers every module's config type uses to
//! produce them with the full path of the bad field. This module sits at the
//! bottom: the axes' config types (queue, controller, forwarding, topology,
//! applications) import it; it imports none of them.

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{DeserializeOwned, Deserializer, IntoDeserializer, Unexpected, Visitor};
use serde_json::Value;
use std::fmt;

/// A bad scenario: the path of the offending field and the reason, shown as one
/// line `path: reason` (or just `reason` when the scenario as a whole is wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub reason: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// `s` on one line: control characters (a newline in a key, say) escaped.
fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = one_line(&self.reason.replace('\n', " "));
        if self.path.is_empty() {
            write!(f, "scenario: {reason}")
        } else {
            write!(f, "{}: {reason}", one_line(&self.path))
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Deserialize `value` into `T`, reporting errors with their full field path
/// (`prefix` + the path inside `value`).
pub fn parse_at<T: DeserializeOwned>(value: Value, prefix: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(Strict(value)).map_err(|e| {
        let inner = e.inner().to_string();
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let mut path = join_path(prefix, &path);
        // serde says "unknown field `x`, expected one of ..." (the path already
        // names x) and "missing field `x`" (the path names x's parent).
        let msg = if let Some(rest) = inner.strip_prefix("unknown field `") {
            let expected = rest
                .split_once('`')
                .map_or("", |(_, e)| e.trim_start_matches(", "));
            format!("unknown key ({expected})")
        } else if let Some(rest) = inner.strip_prefix("missing field `") {
            path = join_path(&path, rest.trim_end_matches('`'));
            "required".to_string()
        } else {
            in_scenario_words(&inner)
        };
        ScenarioError::new(path, msg)
    })
}

/// serde's "invalid type: map, expected u32" in the scenario's words: TOML's
/// tables and lists, and integer ranges rather than Rust's type names.
fn in_scenario_words(message: &str) -> String {
    let Some((head, expected)) = message.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let expected = match expected {
        "u8" => "an integer from 0 to 255",
        "u16" => "an integer from 0 to 65535",
        "u32" => "an integer from 0 to 4294967295",
        "u64" => "an integer from 0 to 2^64 - 1",
        "f64" => "a number",
        "a sequence" => "a list",
        other => other,
    };
    let head = head
        .replace("invalid type: sequence", "invalid type: list")
        .replace("invalid type: map", "invalid type: table");
    format!("{head}, expected {expected}")
}

pub fn join_path(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

/// A scenario value read as `serde_json::Value` reads itself, except that a
/// table must be a table: serde's derived structs also take a list of their
/// fields in order (`link = ["1Gbps", "1us"]`, `network = []`), which the
/// scenario format (docs/scenario.md) does not have and which would be read
/// silently.
struct Strict(Value);

impl IntoDeserializer<'_, serde_json::Error> for Strict {
    type Deserializer = Strict;
    fn into_deserializer(self) -> Strict {
        self
    }
}

/// What serde calls `value` in "invalid type: ..., expected ...".
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

macro_rules! forward_to_value {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
            self.0.$method(visitor)
        })*
    };
}

impl<'de> Deserializer<'de> for Strict {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter().map(Strict));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Value::Object(map) => {
                let mut map = MapDeserializer::new(map.into_iter().map(|(k, v)| (k, Strict(v))));
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        match self.0 {
            Value::Object(_) => self.deserialize_any(visitor),
            other => Err(serde::de::Error::invalid_type(
                unexpected(&other),
                &"a table",
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            value => visitor.visit_some(Strict(value)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        visitor.visit_newtype_struct(self)
    }

    /// Every enum of the scenario is a name (a string); `Value` would also
    /// take a one-key table naming the variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        match self.0 {
            Value::String(_) => self.0.deserialize_enum(name, variants, visitor),
            other => Err(serde::de::Error::invalid_type(
                unexpected(&other),
                &"a string",
            )),
        }
    }

    forward_to_value! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32
        deserialize_f64 deserialize_char deserialize_str deserialize_string deserialize_bytes
        deserialize_byte_buf deserialize_unit deserialize_identifier deserialize_ignored_any
    }

    serde::forward_to_deserialize_any! {
        seq tuple tuple_struct map unit_struct
    }
}

/// No keys: the table of a mechanism without parameters (a queue
/// discipline's, a forwarding policy's).
#[derive(Clone, Debug, Default, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoKeys {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Link {
        rate: Option<String>,
        delay: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Net {
        #[serde(default)]
        link: Option<Link>,
        #[serde(default)]
        links: Vec<Link>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Policy {
        Ecmp,
    }

    fn err(v: Value) -> String {
        parse_at::<Net>(v, "net").unwrap_err().to_string()
    }

    /// serde's derived structs take a list of their fields in order; the
    /// scenario's tables do not.
    #[test]
    fn a_table_given_as_a_list_is_refused_at_any_depth() {
        assert_eq!(err(json!([])), "net: invalid type: list, expected a table");
        assert_eq!(
            err(json!({"link": ["1Gbps", 1]})),
            "net.link: invalid type: list, expected a table"
        );
        assert_eq!(
            err(json!({"links": [{"rate": "1Gbps"}, ["1Gbps", 1]]})),
            "net.links[1]: invalid type: list, expected a table"
        );
        assert!(parse_at::<Net>(json!({"link": {"rate": "1Gbps"}, "links": [{}]}), "net").is_ok());
    }

    #[test]
    fn type_errors_are_in_the_scenario_words() {
        assert_eq!(
            err(json!({"link": {"delay": -1}})),
            "net.link.delay: invalid value: integer `-1`, expected an integer from 0 to 4294967295"
        );
        assert_eq!(
            err(json!({"links": {"rate": "1Gbps"}})),
            "net.links: invalid type: table, expected a list"
        );
        assert_eq!(
            err(json!({"link": {"rate": 5}})),
            "net.link.rate: invalid type: integer `5`, expected a string"
        );
        // A name, not serde's "string or map" (a one-key table naming the variant).
        let policy = |v: Value| parse_at::<Policy>(v, "policy").map_err(|e| e.to_string());
        assert!(matches!(policy(json!("ecmp")), Ok(Policy::Ecmp)));
        assert_eq!(
            policy(json!({"ecmp": null})).unwrap_err(),
            "policy: invalid type: table, expected a string"
        );
        assert_eq!(
            policy(json!(1)).unwrap_err(),
            "policy: invalid type: integer `1`, expected a string"
        );
    }
}
