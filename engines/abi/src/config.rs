//! What the engines' `[engines.NAME]` tables share: reading a table into an engine's
//! config type, the `specialize` policy, and `cache_dir`.
//!
//! An engine's config type derives `Deserialize` with `#[serde(deny_unknown_fields,
//! default)]`: every key is optional, and a typo is an error naming it and the valid keys
//! instead of silently running with defaults.

use crate::{cache_location, CacheLocation};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};

/// Which specialisations of a kernel an engine compiles (`specialize = "fixed"`,
/// `"dynamic"` or `"both"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpecializePolicy {
    /// Shapes, strides and offsets baked in: best code, one compile per shape.
    Fixed,
    /// Shapes passed at run time: one compile per structure, reused across sizes.
    Dynamic,
    /// Fixed code for each new shape, until a kernel has been compiled fixed for two
    /// different shapes; from then on new shapes of that kernel use dynamic code (shapes
    /// seen before keep their fixed code). A steady loop gets the best code and compiles
    /// once; a program whose sizes keep changing stops paying a compile per size.
    #[default]
    Both,
}

/// Keys of an engine's table that the runtime reads itself. The runtime already removes
/// them before handing the table over; [`read_config`] drops them too, so that a table
/// passed whole (a test's, a direct `LoadedEngine::open` caller's) is accepted without
/// every config type declaring fields it never reads, which would also list them among
/// the valid keys of an unknown-key error.
pub const RUNTIME_KEYS: &[&str] = &["library", "child"];

/// Reads an engine's table into its config type `C`. The error names the key: serde's
/// "unknown field `x`, expected one of `a`, `b`", or "`key`: what is wrong with it".
pub fn read_config<C: DeserializeOwned>(table: &toml::Table) -> Result<C, String> {
    let mut table = table.clone();
    table.retain(|k, _| !RUNTIME_KEYS.contains(&k));
    toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| {
            // toml names the key of a bad value on a last line, "in `key`"; it has no
            // accessor for it.
            let text = e.to_string();
            match text.trim_end().rsplit_once("\nin ") {
                Some((msg, key)) if msg.starts_with(key) => msg.to_string(),
                Some((msg, key)) => format!("{key}: {msg}"),
                None => text.trim_end().to_string(),
            }
        })
}

/// Reads one value of a table with `read`, failing with "must be {must_be}, got {value}":
/// for keys whose accepted values no serde type describes (ranges, several types).
pub fn read_value<'de, D: Deserializer<'de>, T>(
    d: D,
    must_be: &str,
    read: impl FnOnce(&toml::Value) -> Option<T>,
) -> Result<T, D::Error> {
    let v = toml::Value::deserialize(d)?;
    read(&v).ok_or_else(|| D::Error::custom(format!("must be {must_be}, got {v}")))
}

/// A `cache_dir` key, read by [`cache_location`].
impl<'de> Deserialize<'de> for CacheLocation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        cache_location(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Sample {
        specialize: SpecializePolicy,
        #[serde(deserialize_with = "small")]
        small: u8,
        cache_dir: Option<CacheLocation>,
    }

    fn small<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
        read_value(d, "an integer below 10", |v| {
            v.as_integer()
                .filter(|n| (0..10).contains(n))
                .map(|n| n as u8)
        })
    }

    fn read(text: &str) -> Result<Sample, String> {
        read_config(&text.parse().unwrap())
    }

    #[test]
    fn specialize_reads_the_lowercase_names_and_defaults_to_both() {
        assert_eq!(read("").unwrap().specialize, SpecializePolicy::Both);
        for (text, want) in [
            ("fixed", SpecializePolicy::Fixed),
            ("dynamic", SpecializePolicy::Dynamic),
            ("both", SpecializePolicy::Both),
        ] {
            let s = read(&format!("specialize = \"{text}\"")).unwrap();
            assert_eq!(s.specialize, want);
        }
        let e = read("specialize = \"Fixed\"").unwrap_err();
        assert!(
            e.starts_with("`specialize`: ") && e.contains("`fixed`, `dynamic`, `both`"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_value_names_its_key_what_it_must_be_and_what_it_got() {
        let e = read("small = 12").unwrap_err();
        assert_eq!(e, "`small`: must be an integer below 10, got 12");
        let e = read("small = \"1\"").unwrap_err();
        assert_eq!(e, "`small`: must be an integer below 10, got \"1\"");
    }

    #[test]
    fn a_bad_cache_dir_is_named_once() {
        let e = read("cache_dir = \"rel\"").unwrap_err();
        assert!(e.starts_with("`cache_dir` must be absolute"), "{e}");
        let s = read("cache_dir = \"\"").unwrap();
        assert_eq!(s.cache_dir, Some(CacheLocation::Off));
    }
}
