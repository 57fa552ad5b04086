//! What the variables given at startup (command line, my.cnf) configure:
//! the database and the listener. A variable whose value lives in one of
//! these structs reads its default from the struct and writes its startup
//! value into it, so the owning crate's default is the only one.

use std::net::SocketAddr;
use std::path::PathBuf;

use database::DatabaseConfig;
use protocol::ServerConfig;

use super::Type;

/// The settings the startup variables shape before anything opens.
#[derive(Debug, Clone)]
pub struct StartupConfig {
    pub database: DatabaseConfig,
    pub server: ServerConfig,
}

impl StartupConfig {
    /// The owning crates' defaults, for data directory `datadir`,
    /// listening on `address`.
    pub fn new(datadir: impl Into<PathBuf>, address: SocketAddr) -> StartupConfig {
        let server = ServerConfig { bind_address: address, ..ServerConfig::default() };
        StartupConfig { database: DatabaseConfig::new(datadir), server }
    }
}

impl Default for StartupConfig {
    /// No data directory yet, the listener's default address.
    fn default() -> StartupConfig {
        StartupConfig::new(PathBuf::new(), ServerConfig::default().bind_address)
    }
}

/// A startup value parsed by its variable's type, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    Number(u64),
    Boolean(bool),
    /// Text, or an enumeration's word as the definition spells it.
    Text(String),
}

impl Setting {
    /// `text` as a variable of type `value_type` takes it: numbers with a
    /// K, M or G multiplier, booleans as ON/OFF/TRUE/FALSE/1/0, an
    /// enumeration's words in any case. The error is the reason, to follow
    /// the option and its value.
    pub fn parse(value_type: Type, text: &str) -> Result<Setting, String> {
        match value_type {
            Type::Integer => number(text).map(Setting::Number),
            Type::Boolean => match text.trim().to_ascii_uppercase().as_str() {
                "1" | "ON" | "TRUE" => Ok(Setting::Boolean(true)),
                "0" | "OFF" | "FALSE" => Ok(Setting::Boolean(false)),
                _ => Err("is not ON or OFF".into()),
            },
            Type::Enumeration(words) => match words.iter().find(|word| word.eq_ignore_ascii_case(text.trim())) {
                Some(word) => Ok(Setting::Text(word.to_string())),
                None => Err(format!("is not {}", words.join(" or "))),
            },
            Type::Text => Ok(Setting::Text(text.to_string())),
        }
    }

    /// As the SQL layer's value text (booleans as 1 and 0).
    pub fn text(&self) -> String {
        match self {
            Setting::Number(number) => number.to_string(),
            Setting::Boolean(on) => u8::from(*on).to_string(),
            Setting::Text(text) => text.clone(),
        }
    }

    pub fn number(&self) -> Result<u64, String> {
        match self {
            Setting::Number(number) => Ok(*number),
            _ => Err("is not a number".into()),
        }
    }

    /// A number that must fit the field (server_id is 32 bits, sizes fit usize).
    pub fn number_within<T: TryFrom<u64>>(&self) -> Result<T, String> {
        T::try_from(self.number()?).map_err(|_| "is too large".into())
    }

    pub fn boolean(&self) -> Result<bool, String> {
        match self {
            Setting::Boolean(on) => Ok(*on),
            _ => Err("is not ON or OFF".into()),
        }
    }

    pub fn word(&self) -> Result<&str, String> {
        match self {
            Setting::Text(text) => Ok(text),
            _ => Err("is not text".into()),
        }
    }
}

/// A number with an optional K, M or G (binary) multiplier.
fn number(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, multiplier) = match text.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&text[..text.len() - 1], 1u64 << 10),
        Some('M') => (&text[..text.len() - 1], 1 << 20),
        Some('G') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let number = digits.parse::<u64>().map_err(|_| "is not a number".to_string())?;
    number.checked_mul(multiplier).ok_or_else(|| "is over 2^64".to_string())
}

/// Where a variable's value comes from, and where a startup value goes.
#[derive(Clone, Copy)]
pub enum Origin {
    /// The SQL layer's own: this default; a startup value becomes the
    /// global value.
    Own(&'static str),
    /// Read by its owner when it starts work (START REPLICA, a dump): the
    /// default is the owner's; a startup value becomes the global value.
    Owner(fn() -> String),
    /// A field of [`StartupConfig`]: the default is what the owning crate's
    /// config starts with, a startup value is written there, and the
    /// global value is read back from it.
    Startup(Field),
}

/// A field of [`StartupConfig`] as a variable's text. `write` gives the
/// reason a value is refused.
#[derive(Clone, Copy)]
pub struct Field {
    pub read: fn(&StartupConfig) -> String,
    pub write: fn(&mut StartupConfig, &Setting) -> Result<(), String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_binary_multipliers_and_refuse_overflow() {
        assert_eq!(Setting::parse(Type::Integer, "16M"), Ok(Setting::Number(16 << 20)));
        assert_eq!(Setting::parse(Type::Integer, " 2k"), Ok(Setting::Number(2048)));
        assert_eq!(Setting::parse(Type::Integer, "20000000000G"), Err("is over 2^64".into()));
        assert_eq!(Setting::parse(Type::Integer, "-1"), Err("is not a number".into()));
        assert_eq!(Setting::Number(1 << 32).number_within::<u32>(), Err("is too large".into()));
    }

    #[test]
    fn booleans_and_enumerations_take_their_words_in_any_case() {
        for (text, on) in [("on", true), ("TRUE", true), ("1", true), ("Off", false), ("false", false), ("0", false)] {
            assert_eq!(Setting::parse(Type::Boolean, text), Ok(Setting::Boolean(on)), "{text}");
        }
        assert_eq!(Setting::parse(Type::Boolean, "yes"), Err("is not ON or OFF".into()));
        let words = Type::Enumeration(&["CRC32", "NONE"]);
        assert_eq!(Setting::parse(words, "crc32"), Ok(Setting::Text("CRC32".into())));
        assert_eq!(Setting::parse(words, "MD5"), Err("is not CRC32 or NONE".into()));
    }
}
