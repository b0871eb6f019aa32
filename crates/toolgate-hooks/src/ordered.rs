//! JSON whose objects keep their keys in the order written, so that an
//! agent's settings file keeps its shape when toolgate adds or removes its
//! entry (the workspace's `serde_json` sorts keys, which the audit log's
//! stored form relies on).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// A JSON value whose objects keep their key order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// An object, keys in the order written.
    Object(Vec<(String, Json)>),
    /// An array.
    Array(Vec<Json>),
    /// Anything else.
    Scalar(Value),
}

impl Json {
    /// An empty object.
    pub fn object() -> Json {
        Json::Object(Vec::new())
    }

    /// The value of `key`, when this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key`, inserted (at the end) as `default` when missing;
    /// `None` when this is not an object.
    pub fn entry(&mut self, key: &str, default: Json) -> Option<&mut Json> {
        let Json::Object(items) = self else {
            return None;
        };
        let at = match items.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                items.push((key.to_string(), default));
                items.len() - 1
            }
        };
        items.get_mut(at).map(|(_, v)| v)
    }

    /// Removes `key` from an object.
    pub fn remove(&mut self, key: &str) {
        if let Json::Object(items) = self {
            items.retain(|(k, _)| k != key);
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Scalar(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether this is an empty object or array.
    pub fn is_empty(&self) -> bool {
        match self {
            Json::Object(items) => items.is_empty(),
            Json::Array(items) => items.is_empty(),
            Json::Scalar(_) => false,
        }
    }

    /// Pretty text (two-space indent) with a final newline.
    pub fn to_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Object(items) => {
                let mut map = s.serialize_map(Some(items.len()))?;
                for (k, v) in items {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Json::Scalar(v) => v.serialize(s),
        }
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Scalar(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Scalar(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Scalar(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Scalar(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::Scalar(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::Scalar(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Scalar(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Scalar(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut items: Vec<(String, Json)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            // A repeated key: the last one counts, as for serde_json.
            items.retain(|(old, _)| *old != k);
            items.push((k, v));
        }
        Ok(Json::Object(items))
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_through_a_round_trip() {
        let text = r#"{"zeta": 1, "alpha": {"b": [true, null, 1.5], "a": "x"}}"#;
        let j: Json = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&j).unwrap(),
            r#"{"zeta":1,"alpha":{"b":[true,null,1.5],"a":"x"}}"#
        );
    }
}
