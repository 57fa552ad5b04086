//! A bound on how deep a statement's syntax tree can be, read from its
//! tokens before the tree exists.
//!
//! sqlparser limits its own recursion (nested parentheses, functions,
//! subqueries, unary operators), but it builds a chain of binary operators
//! (`1+1+…+1`, `a OR b OR …`, `x::t::t`, `q UNION q UNION …`) in a loop, as
//! a left-deep tree as deep as the chain is long. Cloning, evaluating,
//! visiting and dropping that tree all recurse once per level, and a chain
//! of a few thousand terms overflows a thread's stack, which aborts the
//! whole process. So the depth is bounded from the tokens first, and a
//! statement over the limit is refused with MySQL's 1436 before any tree is
//! built.
//!
//! The bound: within one pair of brackets, one comma-separated element is
//! at most one chain, with one level per operator in it (every token but
//! an operand: a literal, a placeholder, or a name that is not a keyword)
//! and one for its leaf; a bracketed group adds its own bound plus one to
//! the element it sits in. Commas do not cut a chain of set operations
//! (`SELECT 1, 2 UNION SELECT 3, 4 UNION …`), so every UNION, EXCEPT,
//! INTERSECT and MINUS in a group counts once more, whichever element it is
//! in. Long lists (`IN (1, 2, …)`, `VALUES (…), (…)`, select lists) are
//! flat and stay cheap.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// The deepest syntax tree a statement may have; its recursive walks fit
/// in [`protocol::STATEMENT_STACK_BYTES`] with room to spare, even
/// unoptimized.
pub const EXPRESSION_DEPTH_MAX: usize = 2_000;

/// Depth bound of the innermost open group.
#[derive(Default)]
struct Group {
    /// Operators (and nested groups' bounds) of the element being read.
    element: usize,
    /// The largest finished element.
    widest_element: usize,
    set_operations: usize,
}

impl Group {
    fn bound(&self) -> usize {
        // One more for the leaf at the bottom of the deepest element.
        self.element.max(self.widest_element) + 1 + self.set_operations
    }
}

/// An upper bound on the depth of the tree sqlparser would build from
/// `tokens` (whitespace already removed).
pub fn depth_bound(tokens: &[Token]) -> usize {
    let mut open: Vec<Group> = Vec::new();
    let mut current = Group::default();
    for token in tokens {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace => open.push(std::mem::take(&mut current)),
            Token::RParen | Token::RBracket | Token::RBrace => {
                let inner = current.bound();
                // An unbalanced closing bracket is a syntax error for the
                // parser to report; the bound just goes on.
                current = open.pop().unwrap_or_default();
                current.element += inner + 1;
            }
            Token::Comma => {
                current.widest_element = current.widest_element.max(current.element);
                current.element = 0;
            }
            Token::Word(word) if word.quote_style.is_none() && is_set_operation(&word.value) => {
                current.set_operations += 1;
                current.element += 1;
            }
            token if is_operand(token) => {}
            _ => current.element += 1,
        }
    }
    // Unclosed groups (a syntax error too) count as if closed at the end.
    while let Some(mut outer) = open.pop() {
        outer.element += current.bound() + 1;
        current = outer;
    }
    current.bound()
}

/// A leaf of the tree: it adds no level of its own. Anything not known to
/// be one counts as an operator, which only loosens the bound.
fn is_operand(token: &Token) -> bool {
    match token {
        Token::Word(word) => word.quote_style.is_some() || word.keyword == Keyword::NoKeyword,
        Token::Number(..) | Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) | Token::Placeholder(_) => true,
        _ => false,
    }
}

fn is_set_operation(word: &str) -> bool {
    ["UNION", "EXCEPT", "INTERSECT", "MINUS"].iter().any(|keyword| word.eq_ignore_ascii_case(keyword))
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn bound(sql: &str) -> usize {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().unwrap();
        let tokens: Vec<Token> = tokens.into_iter().filter(|token| !matches!(token, Token::Whitespace(_))).collect();
        depth_bound(&tokens)
    }

    #[test]
    fn an_operator_chain_counts_every_operator() {
        let chain = vec!["1"; 1000].join("+");
        // SELECT, 999 operators, the leaf.
        assert_eq!(bound(&format!("SELECT {chain}")), 1 + 999 + 1);
        let chain = (0..1000).map(|n| format!("col1 = {n}")).collect::<Vec<_>>().join(" OR ");
        // SELECT * FROM WHERE, 1000 `=`, 999 OR, the leaf.
        assert_eq!(bound(&format!("SELECT * FROM t WHERE {chain}")), 4 + 1000 + 999 + 1);
    }

    #[test]
    fn lists_are_as_deep_as_their_widest_element() {
        let list = (0..10_000).map(|n| n.to_string()).collect::<Vec<_>>().join(", ");
        assert!(bound(&format!("SELECT * FROM t WHERE a IN ({list})")) < 10);
        let rows = vec!["(1, 'x', 2.5)"; 10_000].join(", ");
        assert!(bound(&format!("INSERT INTO t VALUES {rows}")) < 10);
    }

    #[test]
    fn a_group_adds_its_bound_to_the_element_it_is_in() {
        // SELECT; then `(1+2, 3)` bounds at one operator and its leaf, plus
        // one for the group; then the root's leaf.
        assert_eq!(bound("SELECT f(1+2, 3)"), 1 + (1 + 1) + 1 + 1);
        // Two levels a group (the group, and its leaf counted again).
        assert_eq!(bound("SELECT ((((1))))"), 1 + 4 * 2 + 1);
    }

    #[test]
    fn commas_do_not_cut_a_chain_of_set_operations() {
        let chain = vec!["SELECT 1, 2"; 1000].join(" UNION ");
        assert!(bound(&chain) >= 999);
    }

    #[test]
    fn unbalanced_brackets_still_give_a_bound() {
        assert!(bound("SELECT ((1 + 2") >= 3);
        assert!(bound("SELECT 1)) + 2") >= 2);
    }
}
