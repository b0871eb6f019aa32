//! The config as written: serde types holding every value with its byte span,
//! and every table with its keys and their spans, before anything is checked.
//!
//! Nothing here refuses a value: a value of the wrong type is kept as
//! [`Written`] (a table where a value was expected, or the other way round,
//! by its TOML type) so that the validation pass (the rest of `config`) can
//! name it with the file, the line and the fix, in the order written.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, IgnoredAny, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use toml::Spanned;
use toml::de::DeValue;

/// The key under which the toml crate hands a datetime to serde.
const DATETIME_FIELD: &str = "$__toml_private_datetime";

/// One value as written, whatever its type.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Written {
    /// A string.
    Text(String),
    /// An integer (wide enough for any TOML integer).
    Integer(i128),
    /// A float.
    Float(f64),
    /// An array, each item with its span.
    List(Vec<Spanned<Written>>),
    /// A boolean.
    Bool(bool),
    /// Anything else (a datetime, a table), by its TOML type name.
    Other(&'static str),
}

impl Written {
    /// The TOML type name, as messages show it.
    pub(super) fn type_str(&self) -> &'static str {
        match self {
            Written::Text(_) => "string",
            Written::Integer(_) => "integer",
            Written::Float(_) => "float",
            Written::List(_) => "array",
            Written::Bool(_) => "boolean",
            Written::Other(name) => name,
        }
    }

    /// The text, if this is a string.
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Written::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub(super) fn as_list(&self) -> Option<&[Spanned<Written>]> {
        match self {
            Written::List(items) => Some(items),
            _ => None,
        }
    }

    /// The number, if this is an integer or a float.
    pub(super) fn as_number(&self) -> Option<f64> {
        match self {
            // Precision does not matter here: callers bound it to a day of seconds.
            #[allow(clippy::cast_precision_loss)]
            Written::Integer(i) => Some(*i as f64),
            Written::Float(f) => Some(*f),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WrittenVisitor)
    }
}

struct WrittenVisitor;

impl<'de> Visitor<'de> for WrittenVisitor {
    type Value = Written;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Written, E> {
        Ok(Written::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Written, E> {
        Ok(Written::Integer(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Written, E> {
        Ok(Written::Integer(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Written, E> {
        Ok(Written::Integer(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Written, E> {
        Ok(Written::Integer(i128::try_from(v).unwrap_or(i128::MAX)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Written, E> {
        Ok(Written::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Written, E> {
        Ok(Written::Text(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Written, E> {
        Ok(Written::Text(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Written, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Written>>()? {
            items.push(item);
        }
        Ok(Written::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Written, A::Error> {
        let mut kind = "table";
        if let Some(key) = map.next_key::<String>()? {
            if key == DATETIME_FIELD {
                kind = "datetime";
            }
            map.next_value::<IgnoredAny>()?;
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        }
        Ok(Written::Other(kind))
    }
}

/// Reads a parsed value into its serde type (spans stay those of the file).
pub(super) fn read<'de, T: Deserialize<'de>>(
    value: Spanned<DeValue<'de>>,
) -> Result<T, toml::de::Error> {
    T::deserialize(value.into_deserializer())
}

/// A table as written: its values read into `T`, and its keys with their
/// spans (for unknown keys, lines and the order written). Anything that is not
/// a table is kept as [`Written`].
#[derive(Debug)]
pub(super) enum Section<T> {
    /// A table.
    Table {
        /// Its values.
        fields: T,
        /// Its keys, as serde met them (sort by span for the order written).
        keys: Vec<Spanned<String>>,
    },
    /// Not a table.
    Other(Written),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Section<T> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SectionVisitor(PhantomData))
    }
}

struct SectionVisitor<T>(PhantomData<T>);

/// A visitor's scalar methods, each keeping the value as [`WrittenVisitor`]
/// reads it, then through `$wrap`.
macro_rules! scalars_as_written {
    ($wrap:expr) => {
        scalars_as_written!(@each $wrap; visit_bool(bool), visit_i64(i64), visit_u64(u64),
            visit_i128(i128), visit_u128(u128), visit_f64(f64), visit_str(&str),
            visit_string(String));
    };
    (@each $wrap:expr; $($method:ident($ty:ty)),*) => {
        $(fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            WrittenVisitor.$method(v).map($wrap)
        })*
    };
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for SectionVisitor<T> {
    type Value = Section<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }

    scalars_as_written!(Section::Other);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Section<T>, A::Error> {
        WrittenVisitor.visit_seq(seq).map(Section::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Section<T>, A::Error> {
        // A table's keys carry their spans; the one key of a datetime (which
        // toml hands over as a map) does not.
        let first = match map.next_key_seed(FirstKey)? {
            None => None,
            Some(Some(key)) => Some(key),
            Some(None) => {
                map.next_value::<IgnoredAny>()?;
                return Ok(Section::Other(Written::Other("datetime")));
            }
        };
        let mut keys = Vec::new();
        let fields = T::deserialize(de::value::MapAccessDeserializer::new(KeyRecorder {
            map,
            pending: first.map(|key| {
                let name = key.get_ref().clone();
                keys.push(key);
                name
            }),
            keys: &mut keys,
        }))?;
        Ok(Section::Table { fields, keys })
    }
}

/// Reads a map's first key with its span, or `None` when it has none.
struct FirstKey;

impl<'de> DeserializeSeed<'de> for FirstKey {
    type Value = Option<Spanned<String>>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(Spanned::<String>::deserialize(d).ok())
    }
}

/// Hands a table to `T` key by key, keeping each key with its span.
struct KeyRecorder<'k, A> {
    map: A,
    /// The first key, already read.
    pending: Option<String>,
    keys: &'k mut Vec<Spanned<String>>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for KeyRecorder<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some(name) = self.pending.take() {
            return seed.deserialize(name.into_deserializer()).map(Some);
        }
        self.map.next_key_seed(RecordedKey {
            seed,
            keys: self.keys,
        })
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// Reads a key with its span, records it, and gives `seed` its text.
struct RecordedKey<'k, K> {
    seed: K,
    keys: &'k mut Vec<Spanned<String>>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for RecordedKey<'_, K> {
    type Value = K::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<K::Value, D::Error> {
        let key = Spanned::<String>::deserialize(d)?;
        let name = key.get_ref().clone();
        self.keys.push(key);
        self.seed.deserialize(name.into_deserializer())
    }
}

/// A whole config file.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawConfig {
    pub mode: Option<Spanned<Written>>,
    pub timeout: Option<Spanned<Written>>,
    pub permission: Option<Spanned<Section<RawPermission>>>,
    pub rules: Option<Spanned<RawRules>>,
    pub tool_output: Option<Spanned<Section<RawToolOutput>>>,
    pub approvals: Option<Spanned<Section<RawApprovals>>>,
    pub serve: Option<Spanned<Section<RawServe>>>,
    pub sandbox: Option<Spanned<Section<RawSandbox>>>,
}

/// `[permission]`: each action's effect, or its table of `pattern = effect`
/// (a [`Section`] whose `Other` is the effect).
pub(super) type RawPermission = BTreeMap<String, Spanned<Section<RawPatterns>>>;

/// `[permission.ACTION]`: `pattern = effect`.
pub(super) type RawPatterns = BTreeMap<String, Spanned<Written>>;

/// `rules`: the `[[rules]]` entries, or whatever else was written.
#[derive(Debug)]
pub(super) enum RawRules {
    /// An array, each entry with its span.
    List(Vec<Spanned<Section<RawRule>>>),
    /// Not an array.
    Other,
}

impl<'de> Deserialize<'de> for RawRules {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RulesVisitor)
    }
}

struct RulesVisitor;

impl<'de> Visitor<'de> for RulesVisitor {
    type Value = RawRules;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }

    scalars_as_written!(|_| RawRules::Other);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawRules, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Section<RawRule>>>()? {
            items.push(item);
        }
        Ok(RawRules::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawRules, A::Error> {
        WrittenVisitor.visit_map(map).map(|_| RawRules::Other)
    }
}

/// `[tool_output]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawToolOutput {
    pub max_lines: Option<Spanned<Written>>,
    pub max_bytes: Option<Spanned<Written>>,
    pub redact_secrets: Option<Spanned<Written>>,
    pub flag_injection: Option<Spanned<Written>>,
}

impl RawToolOutput {
    pub(super) const KEYS: &[&str] =
        &["max_lines", "max_bytes", "redact_secrets", "flag_injection"];
}

/// `[approvals]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawApprovals {
    pub channels: Option<Spanned<Written>>,
    pub escalate_after: Option<Spanned<Written>>,
}

impl RawApprovals {
    pub(super) const KEYS: &[&str] = &["channels", "escalate_after"];
}

/// `[serve]`. `token` is read only to refuse it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawServe {
    pub token_file: Option<Spanned<Written>>,
    pub token_env: Option<Spanned<Written>>,
    pub token: Option<Spanned<Written>>,
}

impl RawServe {
    pub(super) const KEYS: &[&str] = &["token_file", "token_env", "token"];
}

/// `[sandbox]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawSandbox {
    pub mode: Option<Spanned<Written>>,
    pub writable: Option<Spanned<Written>>,
    pub allow_domains: Option<Spanned<Written>>,
    pub readable: Option<Spanned<Written>>,
    pub env: Option<Spanned<Written>>,
}

impl RawSandbox {
    pub(super) const KEYS: &[&str] = &["mode", "writable", "allow_domains", "readable", "env"];
}

/// One `[[rules]]` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawRule {
    pub action: Option<Spanned<Written>>,
    pub resource: Option<Spanned<Written>>,
    pub effect: Option<Spanned<Written>>,
    #[serde(rename = "match")]
    pub must_match: Option<Spanned<Written>>,
    pub not_match: Option<Spanned<Written>>,
}

impl RawRule {
    pub(super) const KEYS: &[&str] = &["action", "resource", "effect", "match", "not_match"];
}

/// The first problem of a section in the order written: every check reports
/// at the offset where today's reading meets it, and the earliest wins.
pub(super) struct FirstProblem<E> {
    first: Option<(usize, E)>,
}

impl<E> FirstProblem<E> {
    /// No problem yet.
    pub(super) fn new() -> Self {
        FirstProblem { first: None }
    }

    /// Records `problem`, met at byte `at`.
    pub(super) fn note(&mut self, at: usize, problem: E) {
        if self.first.as_ref().is_none_or(|(seen, _)| at < *seen) {
            self.first = Some((at, problem));
        }
    }

    /// Checks one optional field, met at its span's start; `None` when it is
    /// absent or wrong.
    pub(super) fn field<'v, T, V>(
        &mut self,
        value: Option<&'v Spanned<V>>,
        check: impl FnOnce(&'v Spanned<V>) -> Result<T, E>,
    ) -> Option<T> {
        let value = value?;
        match check(value) {
            Ok(v) => Some(v),
            Err(e) => {
                self.note(value.span().start, e);
                None
            }
        }
    }

    /// `Ok(value)` when nothing was wrong, else the first problem.
    pub(super) fn into_result<T>(self, value: T) -> Result<T, E> {
        match self.first {
            None => Ok(value),
            Some((_, e)) => Err(e),
        }
    }
}
