//! Which account a client's host matches, as MySQL decides it.
//!
//! The protocol names a loopback client `localhost` and any other by its IP
//! address. An account's host is matched case-insensitively as a LIKE
//! pattern (`%` any run, `_` one character, `\` escapes); a loopback client
//! also matches `127.0.0.1`, `::1` and patterns that match those. When
//! several accounts of one user match, the most specific host wins, as
//! MySQL sorts its user table: hosts without wildcards first, then patterns
//! by the length of their literal prefix, `%` last.

/// Whether the account host `pattern` admits a client whose host is
/// `client_host`.
pub fn host_matches(pattern: &str, client_host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let client_host = client_host.to_ascii_lowercase();
    if like(pattern.as_bytes(), client_host.as_bytes()) {
        return true;
    }
    client_host == "localhost" && ["127.0.0.1", "::1"].iter().any(|address| like(pattern.as_bytes(), address.as_bytes()))
}

/// Sort key: smaller is more specific.
pub fn specificity(pattern: &str) -> (bool, std::cmp::Reverse<usize>) {
    let literal_prefix = pattern.bytes().take_while(|byte| !matches!(byte, b'%' | b'_' | b'\\')).count();
    let has_wildcard = literal_prefix < pattern.len();
    (has_wildcard, std::cmp::Reverse(literal_prefix))
}

/// LIKE matching over bytes, `\\` escaping the next byte. Dynamic
/// programming over (pattern position, text position), so a pattern full of
/// `%` costs pattern length times text length, never exponential time.
fn like(pattern: &[u8], text: &[u8]) -> bool {
    enum Item {
        Any,
        One,
        Byte(u8),
    }
    let mut items = Vec::with_capacity(pattern.len());
    let mut bytes = pattern.iter();
    while let Some(&byte) = bytes.next() {
        items.push(match byte {
            b'%' => Item::Any,
            b'_' => Item::One,
            b'\\' => Item::Byte(bytes.next().copied().unwrap_or(b'\\')),
            other => Item::Byte(other),
        });
    }
    // matched[j]: the items so far match text[..j].
    let mut matched = vec![false; text.len() + 1];
    matched[0] = true;
    for item in &items {
        let mut next = vec![false; text.len() + 1];
        for j in 0..=text.len() {
            next[j] = match item {
                Item::Any => matched[j] || (j > 0 && next[j - 1]),
                Item::One => j > 0 && matched[j - 1],
                Item::Byte(byte) => j > 0 && matched[j - 1] && text[j - 1] == *byte,
            };
        }
        matched = next;
    }
    matched[text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_exact_loopback_wildcard_and_patterns() {
        assert!(host_matches("localhost", "localhost"));
        assert!(host_matches("LocalHost", "localhost"));
        assert!(host_matches("127.0.0.1", "localhost"));
        assert!(host_matches("::1", "localhost"));
        assert!(host_matches("127.%", "localhost"));
        assert!(!host_matches("localhost", "10.0.0.1"));
        assert!(host_matches("%", "10.0.0.1"));
        assert!(host_matches("%", "localhost"));
        assert!(host_matches("10.0.0.%", "10.0.0.1"));
        assert!(!host_matches("10.0.0.%", "10.0.1.1"));
        assert!(host_matches("10.0.0._", "10.0.0.7"));
        assert!(!host_matches("10.0.0._", "10.0.0.17"));
        assert!(host_matches("10.0.0.1", "10.0.0.1"));
        assert!(!host_matches("10.0.0.1", "10.0.0.10"));
        assert!(!host_matches("10\\_0", "1000"));
        assert!(host_matches("10\\_0", "10_0"));
        assert!(!host_matches("", "localhost"));
    }

    #[test]
    fn exact_hosts_sort_before_patterns_and_percent_last() {
        let mut hosts = vec!["%", "10.%", "localhost", "10.0.%", "10.0.0.1"];
        hosts.sort_by_key(|host| specificity(host));
        assert_eq!(hosts, ["localhost", "10.0.0.1", "10.0.%", "10.%", "%"]);
    }
}
