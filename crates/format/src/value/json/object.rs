//! A JSON object: unique keys in MySQL's order (shorter keys first, keys of
//! one length bytewise), the order its binary form stores them in.

use super::Json;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A key ordered as MySQL orders object keys (`json_key_less`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key(String);

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        key_order(&self.0, &other.0)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// MySQL's key order: by length in bytes, then bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    members: BTreeMap<Key, Json>,
}

impl Object {
    pub fn new() -> Self {
        Object::default()
    }

    /// Sets `key` to `value`; a key already present takes the new value
    /// (MySQL keeps the last of duplicate keys), and the old one is returned.
    pub fn insert(&mut self, key: String, value: Json) -> Option<Json> {
        self.members.insert(Key(key), value)
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        self.members.get(&Key(key.to_owned()))
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.members.get_mut(&Key(key.to_owned()))
    }

    pub fn remove(&mut self, key: &str) -> Option<Json> {
        self.members.remove(&Key(key.to_owned()))
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Members in MySQL's key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json)> + DoubleEndedIterator {
        self.members.iter().map(|(key, value)| (key.0.as_str(), value))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator {
        self.members.keys().map(|key| key.0.as_str())
    }
}

impl FromIterator<(String, Json)> for Object {
    /// Later duplicates of a key replace earlier ones.
    fn from_iter<I: IntoIterator<Item = (String, Json)>>(members: I) -> Self {
        Object { members: members.into_iter().map(|(key, value)| (Key(key), value)).collect() }
    }
}
