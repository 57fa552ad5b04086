//! JSON path expressions as MySQL parses and follows them (`json_path.cc`,
//! `Json_dom::seek`).
//!
//! | leg | matches |
//! |-----|---------|
//! | `$` (scope, always first) | the document |
//! | `.key`, `."quoted key"` | the member `key` of an object; an unquoted key is an ECMAScript identifier |
//! | `.*` | every member of an object |
//! | `[n]`, `[last]`, `[last - n]` | one element of an array; a value that is not an array is an array of itself |
//! | `[m to n]` | the elements `m` through `n` |
//! | `[*]` | every element of an array |
//! | `**` | the value and everything inside it (never the last leg, never `***`) |
//!
//! Whitespace may stand between legs and inside `[ ]`. A path that does
//! not parse is error 3143 at the byte where parsing stopped.

use super::Json;

/// MySQL's whitespace for paths (`my_isspace` of utf8mb4).
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// An array position: from the start, or counted back from `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayIndex {
    pub index: u32,
    pub from_end: bool,
}

impl ArrayIndex {
    /// The position in an array of `length` elements, if there is one.
    pub fn resolve(self, length: usize) -> Option<usize> {
        let index = self.index as usize;
        if self.from_end {
            length.checked_sub(1)?.checked_sub(index)
        } else {
            (index < length).then_some(index)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leg {
    Member(String),
    MemberWildcard,
    Cell(ArrayIndex),
    Range(ArrayIndex, ArrayIndex),
    CellWildcard,
    Ellipsis,
}

impl Leg {
    /// The positions of an array of `length` elements this array leg
    /// selects (`Json_array_index` / `get_array_range`).
    fn cells(&self, length: usize) -> std::ops::Range<usize> {
        match self {
            Leg::Cell(index) => index.resolve(length).map_or(0..0, |at| at..at + 1),
            Leg::CellWildcard => 0..length,
            Leg::Range(first, last) => {
                if length == 0 {
                    return 0..0;
                }
                let begin = if first.from_end { (length - 1).saturating_sub(first.index as usize) } else { first.index as usize };
                let end = if last.from_end {
                    match (length - 1).checked_sub(last.index as usize) {
                        Some(end) => end,
                        None => return 0..0,
                    }
                } else {
                    (last.index as usize).min(length - 1)
                };
                if begin > end {
                    0..0
                } else {
                    begin..end + 1
                }
            }
            _ => 0..0,
        }
    }
}

/// A parsed path: the legs after `$`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Path {
    pub legs: Vec<Leg>,
}

/// 3143 ER_INVALID_JSON_PATH: the byte position parsing stopped at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Invalid JSON path expression. The error is around character position {position}.")]
pub struct PathError {
    pub position: usize,
}

impl PathError {
    pub const CODE: u16 = 3143;
    pub const SQL_STATE: &'static str = "42000";
}

impl Path {
    /// Parses a path expression (UTF-8 bytes).
    pub fn parse(text: &[u8]) -> Result<Path, PathError> {
        let mut parser = PathParser { text, position: 0 };
        let mut path = Path::default();
        match parser.path(&mut path) {
            Some(()) => Ok(path),
            None => Err(PathError { position: parser.position }),
        }
    }

    /// `*`, `**` or a range anywhere: the path may match several values.
    pub fn has_wildcards(&self) -> bool {
        self.legs.iter().any(|leg| matches!(leg, Leg::MemberWildcard | Leg::CellWildcard | Leg::Range(..) | Leg::Ellipsis))
    }

    /// The values the path matches in `document`, in document order and
    /// each once.
    pub fn seek<'a>(&self, document: &'a Json) -> Vec<&'a Json> {
        let mut current = vec![document];
        for leg in &self.legs {
            let mut next: Vec<&'a Json> = Vec::new();
            for value in current {
                step(value, leg, &mut next);
            }
            if matches!(leg, Leg::Ellipsis) {
                let mut unique: Vec<&'a Json> = Vec::with_capacity(next.len());
                for value in next {
                    if !unique.iter().any(|seen| std::ptr::eq(*seen, value)) {
                        unique.push(value);
                    }
                }
                next = unique;
            }
            current = next;
        }
        current
    }

    /// The one value a path without wildcards names, for changing it.
    pub fn target_mut<'a>(&self, document: &'a mut Json) -> Option<&'a mut Json> {
        target_mut(document, &self.legs)
    }

    /// This path without its last leg, and that leg (`None` for `$`).
    pub fn split_last(&self) -> Option<(Path, &Leg)> {
        let (last, parent) = self.legs.split_last()?;
        Some((Path { legs: parent.to_vec() }, last))
    }
}

/// MySQL's text of a path (`Json_path::to_string`): `$`, then `.key`
/// (quoted when it is not an ECMAScript identifier), `[n]`, `[last-n]`,
/// `.*`, `[*]`, `**`, `[m to n]`. A path prints as the diffs of a
/// Partial_update_rows event carry it, and parses back to itself.
impl std::fmt::Display for Path {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let index = |index: ArrayIndex| match (index.from_end, index.index) {
            (false, at) => at.to_string(),
            (true, 0) => "last".to_string(),
            (true, back) => format!("last-{back}"),
        };
        out.write_str("$")?;
        for leg in &self.legs {
            match leg {
                Leg::Member(key) if is_ecmascript_identifier(key) => write!(out, ".{key}")?,
                Leg::Member(key) => {
                    let mut quoted = String::new();
                    super::print::write_quoted(key, &mut quoted);
                    write!(out, ".{quoted}")?
                }
                Leg::MemberWildcard => out.write_str(".*")?,
                Leg::Cell(at) => write!(out, "[{}]", index(*at))?,
                Leg::Range(first, last) => write!(out, "[{} to {}]", index(*first), index(*last))?,
                Leg::CellWildcard => out.write_str("[*]")?,
                Leg::Ellipsis => out.write_str("**")?,
            }
        }
        Ok(())
    }
}

/// Follows legs without wildcards; a value that is not an array stands for
/// an array of itself under `[0]` and `[last]`.
fn target_mut<'a>(document: &'a mut Json, legs: &[Leg]) -> Option<&'a mut Json> {
    place_mut(document, legs, true)
}

/// Follows legs without wildcards; with `auto_wrap`, a value that is not
/// an array stands for an array of itself under `[0]` and `[last]` (as
/// the JSON functions read paths), without it only arrays have cells (as
/// MySQL applies a JSON diff, `seek_exact_path`).
pub(crate) fn place_mut<'a>(document: &'a mut Json, legs: &[Leg], auto_wrap: bool) -> Option<&'a mut Json> {
    let mut current = document;
    for leg in legs {
        current = match (leg, current) {
            (Leg::Member(key), Json::Object(object)) => object.get_mut(key)?,
            (Leg::Cell(index), Json::Array(elements)) => {
                let at = index.resolve(elements.len())?;
                &mut elements[at]
            }
            (Leg::Cell(index), other) if auto_wrap && index.resolve(1) == Some(0) => other,
            _ => return None,
        };
    }
    Some(current)
}

fn step<'a>(value: &'a Json, leg: &Leg, out: &mut Vec<&'a Json>) {
    match (leg, value) {
        (Leg::Member(key), Json::Object(object)) => out.extend(object.get(key)),
        (Leg::MemberWildcard, Json::Object(object)) => out.extend(object.iter().map(|(_, member)| member)),
        (Leg::Cell(_) | Leg::Range(..) | Leg::CellWildcard, Json::Array(elements)) => {
            out.extend(elements[leg.cells(elements.len())].iter());
        }
        // Auto-wrap: a non-array is a one-element array.
        (Leg::Cell(_) | Leg::Range(..), other) if leg.cells(1).contains(&0) => out.push(other),
        (Leg::Ellipsis, value) => descendants_and_self(value, out),
        _ => {}
    }
}

fn descendants_and_self<'a>(value: &'a Json, out: &mut Vec<&'a Json>) {
    out.push(value);
    match value {
        Json::Array(elements) => elements.iter().for_each(|element| descendants_and_self(element, out)),
        Json::Object(object) => object.iter().for_each(|(_, member)| descendants_and_self(member, out)),
        _ => {}
    }
}

/// MySQL's path parser; `None` leaves `position` where it failed.
struct PathParser<'a> {
    text: &'a [u8],
    position: usize,
}

impl PathParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.position).copied()
    }

    fn read(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.position += 1;
        Some(byte)
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(is_whitespace) {
            self.position += 1;
        }
    }

    fn path(&mut self, path: &mut Path) -> Option<()> {
        self.skip_whitespace();
        (self.read()? == b'$').then_some(())?;
        self.skip_whitespace();
        while self.peek().is_some() {
            let leg = match self.peek()? {
                b'[' => self.array_leg()?,
                b'.' => self.member_leg()?,
                b'*' => self.ellipsis_leg()?,
                _ => return None,
            };
            path.legs.push(leg);
            self.skip_whitespace();
        }
        // A path may not end with `**`.
        (path.legs.last() != Some(&Leg::Ellipsis)).then_some(())
    }

    fn ellipsis_leg(&mut self) -> Option<Leg> {
        self.position += 1;
        (self.read()? == b'*').then_some(())?;
        match self.peek() {
            None | Some(b'*') => None,
            Some(_) => Some(Leg::Ellipsis),
        }
    }

    fn array_index(&mut self) -> Option<ArrayIndex> {
        let mut from_end = false;
        if self.text[self.position..].starts_with(b"last") {
            self.position += 4;
            from_end = true;
            self.skip_whitespace();
            if self.peek() == Some(b'-') {
                self.position += 1;
                self.skip_whitespace();
            } else {
                return Some(ArrayIndex { index: 0, from_end });
            }
        }
        let digits = self.text[self.position..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let index: u64 = std::str::from_utf8(&self.text[self.position..self.position + digits]).ok()?.parse().ok()?;
        let index = u32::try_from(index).ok()?;
        self.position += digits;
        Some(ArrayIndex { index, from_end })
    }

    fn array_leg(&mut self) -> Option<Leg> {
        self.position += 1;
        self.skip_whitespace();
        let leg = if self.peek()? == b'*' {
            self.position += 1;
            Leg::CellWildcard
        } else {
            let first = self.array_index()?;
            self.skip_whitespace();
            self.peek()?;
            let rest = &self.text[self.position..];
            let after_space = self.position > 0 && is_whitespace(self.text[self.position - 1]);
            if rest.len() > 3 && after_space && rest.starts_with(b"to") && is_whitespace(rest[2]) {
                self.position += 3;
                self.skip_whitespace();
                let last = self.array_index()?;
                // A range that can never match anything is refused.
                if first.from_end == last.from_end
                    && ((first.from_end && first.index < last.index) || (!first.from_end && last.index < first.index))
                {
                    return None;
                }
                Leg::Range(first, last)
            } else {
                Leg::Cell(first)
            }
        };
        self.skip_whitespace();
        (self.read()? == b']').then_some(leg)
    }

    fn member_leg(&mut self) -> Option<Leg> {
        self.position += 1;
        self.skip_whitespace();
        if self.peek()? == b'*' {
            self.position += 1;
            return Some(Leg::MemberWildcard);
        }
        let start = self.position;
        let quoted = self.text[start] == b'"';
        let end = if quoted {
            let mut at = start + 1;
            let mut end = self.text.len();
            while at < self.text.len() {
                match self.text[at] {
                    b'\\' => at += 2,
                    b'"' => {
                        end = at + 1;
                        break;
                    }
                    _ => at += 1,
                }
            }
            end.min(self.text.len())
        } else {
            let length = self.text[start..].iter().take_while(|&&b| !(is_whitespace(b) || matches!(b, b'[' | b'.' | b'*'))).count();
            start + length
        };
        self.position = end;
        let name = &self.text[start..end];
        // The name goes through the JSON parser to lose its quotes and
        // escapes; an unquoted one is quoted first.
        let as_json = if quoted { name.to_vec() } else { [&b"\""[..], name, b"\""].concat() };
        let Ok(Json::String(key)) = super::text::parse(&as_json) else { return None };
        if !quoted && !is_ecmascript_identifier(&key) {
            return None;
        }
        Some(Leg::Member(key))
    }
}

/// ECMAScript's IdentifierName (ES5 7.6) as MySQL checks it: a letter, `$`
/// or `_` first, then also digits, combining marks and connector
/// punctuation.
fn is_ecmascript_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    let starts = |c: char| c == '$' || c == '_' || (c.is_alphabetic() && !('\u{300}'..='\u{36f}').contains(&c));
    starts(first)
        && chars.all(|c| {
            starts(c)
                || c.is_numeric()
                || ('\u{300}'..='\u{36f}').contains(&c)
                || matches!(c, '\u{203f}' | '\u{2040}' | '\u{2054}' | '\u{fe33}' | '\u{fe34}' | '\u{fe4d}'..='\u{fe4f}' | '\u{ff3f}')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::json::print::to_text;
    use crate::value::json::text::parse;

    fn matches(document: &str, path: &str) -> Vec<String> {
        let document = parse(document.as_bytes()).unwrap();
        Path::parse(path.as_bytes()).unwrap().seek(&document).into_iter().map(to_text).collect()
    }

    #[test]
    fn paths_parse_as_mysql_parses_them() {
        let path = Path::parse(br#" $ . a [ 1 ] ."b c"[last - 2][*].***.d[1 to last]"#).unwrap();
        assert_eq!(
            path.legs,
            vec![
                Leg::Member("a".into()),
                Leg::Cell(ArrayIndex { index: 1, from_end: false }),
                Leg::Member("b c".into()),
                Leg::Cell(ArrayIndex { index: 2, from_end: true }),
                Leg::CellWildcard,
                Leg::MemberWildcard,
                Leg::Ellipsis,
                Leg::Member("d".into()),
                Leg::Range(ArrayIndex { index: 1, from_end: false }, ArrayIndex { index: 0, from_end: true }),
            ]
        );
        assert!(path.has_wildcards());
        assert!(!Path::parse(b"$.a[0]").unwrap().has_wildcards());
        assert_eq!(Path::parse(b"$").unwrap().legs, vec![]);
    }

    #[test]
    fn paths_print_as_mysql_prints_them_and_parse_back() {
        for (given, printed) in [
            ("$", "$"),
            (" $ . a [ 1 ]", "$.a[1]"),
            (r#"$."b c"[last - 2][last]"#, r#"$."b c"[last-2][last]"#),
            (r#"$."x".*[*]**.d[1 to last]"#, "$.x.*[*]**.d[1 to last]"),
            (r#"$."a\"b""#, r#"$."a\"b""#),
        ] {
            let path = Path::parse(given.as_bytes()).unwrap();
            assert_eq!(path.to_string(), printed, "{given}");
            assert_eq!(Path::parse(printed.as_bytes()).unwrap(), path, "{printed}");
        }
    }

    #[test]
    fn bad_paths_fail_at_mysqls_position() {
        for (path, position) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"$.", 2),
            (b"$a", 1),
            (b"$[", 2),
            (b"$[a]", 2),
            (b"$[1", 3),
            (b"$**", 3),
            (b"$***.a", 3),
            (b"$.1a", 4),
            (b"$.a-b", 5),
            (b"$[3 to 1]", 8),
            (b"$.\"a", 4),
            (b"$[4294967296]", 2),
        ] {
            assert_eq!(Path::parse(path), Err(PathError { position }), "{}", String::from_utf8_lossy(path));
        }
        assert_eq!(PathError { position: 2 }.to_string(), "Invalid JSON path expression. The error is around character position 2.");
    }

    #[test]
    fn seeking_follows_mysql() {
        let document = r#"{"a": [10, 20, {"b": 1}], "c": {"b": 2}, "d e": 3}"#;
        assert_eq!(matches(document, "$.a[1]"), ["20"]);
        assert_eq!(matches(document, "$.a[last]"), [r#"{"b": 1}"#]);
        assert_eq!(matches(document, "$.a[last-1]"), ["20"]);
        assert_eq!(matches(document, "$.a[5]"), Vec::<String>::new());
        assert_eq!(matches(document, "$.a[0 to 1]"), ["10", "20"]);
        assert_eq!(matches(document, "$.a[*]"), ["10", "20", r#"{"b": 1}"#]);
        assert_eq!(matches(document, "$.*"), [r#"[10, 20, {"b": 1}]"#, r#"{"b": 2}"#, "3"]);
        assert_eq!(matches(document, "$**.b"), ["1", "2"]);
        assert_eq!(matches(document, r#"$."d e""#), ["3"]);
        // A non-array is an array of itself.
        assert_eq!(matches(document, "$.c[0]"), [r#"{"b": 2}"#]);
        assert_eq!(matches(document, "$.c[last].b"), ["2"]);
        assert_eq!(matches(document, "$.c[1]"), Vec::<String>::new());
        assert_eq!(matches(document, "$.c[*]"), Vec::<String>::new());
    }
}
