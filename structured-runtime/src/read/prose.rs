//! Reading plain prose: whole words matched case-insensitively, negation, numbers after a label.
//!
//! The text is split into words once ([`Prose::new`]); every search after that is one pass over
//! the words, so reading a field costs time linear in the text.

/// Words that negate a keyword standing up to [`NEGATION_WINDOW`] words after them in the same
/// clause ("no need to exit", "not critical"). Any word ending in `n't` negates too ("don't").
const NEGATORS: &[&str] = &[
    "no", "not", "never", "without", "nor", "neither", "cannot", "hardly", "dont", "doesnt",
    "didnt", "isnt", "arent", "wasnt", "werent", "wont", "cant", "shouldnt", "wouldnt", "neednt",
];

/// How many words before a keyword a negator may stand.
const NEGATION_WINDOW: usize = 4;

/// Words that start a new clause: "not high but critical" negates `high` only.
const CLAUSE_WORDS: &[&str] = &["but", "however", "although", "though", "whereas", "yet"];

/// Words allowed between a label and its number: "pleasure of -0.5", "confidence is about 80%".
const CONNECTORS: &[&str] = &[
    "is",
    "of",
    "at",
    "was",
    "around",
    "about",
    "approximately",
    "roughly",
    "equals",
    "to",
];

/// At most this many bytes between the end of a label and its number.
const LABEL_GAP: usize = 40;

/// A word of the text: a byte range, and the clause it belongs to.
#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    clause: usize,
    /// All ASCII: compared byte by byte, and rejected by length first.
    ascii: bool,
}

/// A text split into words, ready to be searched: whole words, any case, negation-aware
/// (`Prose::new("Not critical, but HIGH.").find("critical")` has no hit, `find("high")` has one
/// at byte 18; see the tests below).
#[derive(Debug, Clone)]
pub struct Prose<'a> {
    text: &'a str,
    words: Vec<Word>,
}

/// Where a keyword or label was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit<'a> {
    /// Byte offset of the match in the text.
    pub at: usize,
    /// The matched words as written in the text.
    pub written: &'a str,
}

/// The result of looking for a keyword: the first occurrence that counts, and the first one that
/// did not because it was negated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Search<'a> {
    /// The first occurrence not negated by its clause.
    pub hit: Option<Hit<'a>>,
    /// The first negated occurrence, kept so a caller can say why a keyword was not taken.
    pub negated: Option<Hit<'a>>,
}

/// A number written after a label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberHit<'a> {
    /// Byte offset of the number in the text.
    pub at: usize,
    /// The number as written, with its sign and `%`.
    pub written: &'a str,
    /// The value as written (before any percent scaling).
    pub value: f64,
    /// Whether a `%` followed the number.
    pub percent: bool,
    /// The digits, sign included, without grouping commas: exact for integers.
    digits: Digits,
}

/// The literal's digits, kept so an integer field can read a value beyond `f64` precision.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Digits {
    negative: bool,
    /// The integer part, when it fits an `i128` and no fraction follows.
    integer: Option<i128>,
}

impl NumberHit<'_> {
    /// The value as an exact integer: `None` when it has a non-zero fraction or does not fit.
    pub fn as_integer(&self) -> Option<i128> {
        if let Some(i) = self.digits.integer {
            return Some(if self.digits.negative { -i } else { i });
        }
        let v = self.value;
        // Integral and well inside the exact range of f64.
        (v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i128)
    }
}

impl<'a> Prose<'a> {
    /// Splits `text` into words. Linear in the text.
    pub fn new(text: &'a str) -> Self {
        let mut words = Vec::new();
        let mut clause = 0usize;
        let mut start: Option<usize> = None;
        let mut ascii = true;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let next = chars.peek().map(|&(_, n)| n);
            let inside_word = c.is_alphanumeric()
                // An apostrophe between letters belongs to the word: "don't", "don’t".
                || (is_apostrophe(c) && start.is_some() && next.is_some_and(char::is_alphanumeric));
            if inside_word {
                if start.is_none() {
                    start = Some(i);
                    ascii = true;
                }
                ascii &= c.is_ascii();
                continue;
            }
            if let Some(s) = start.take() {
                clause = push_word(text, &mut words, s, i, clause, ascii);
            }
            if ends_clause(c, next) {
                clause += 1;
            }
        }
        if let Some(s) = start {
            push_word(text, &mut words, s, text.len(), clause, ascii);
        }
        Prose { text, words }
    }

    /// The text this was built from.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Whether the text has no word at all.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The first occurrence of `phrase` as whole words, ignoring case, that no negator in its
    /// clause cancels. Words of a phrase must follow each other in one clause, with any
    /// punctuation or spacing between them ("sell everything", "sell-everything").
    pub fn find(&self, phrase: &str) -> Search<'a> {
        let phrase = phrase_words(phrase);
        let mut search = Search::default();
        if phrase.is_empty() {
            return search;
        }
        for i in 0..self.words.len() {
            let Some(hit) = self.match_at(i, &phrase) else {
                continue;
            };
            if self.negated(i) {
                search.negated.get_or_insert(hit);
            } else {
                search.hit = Some(hit);
                break;
            }
        }
        search
    }

    /// The first number written right after one of `labels` ("pleasure: 0.3", "pleasure of
    /// -0.5", "pleasure=+.3", "confidence 80%"), earliest in the text. Labels are matched like
    /// [`Prose::find`] phrases, but negation does not apply to them.
    pub fn number_after(&self, labels: &[&str]) -> Option<NumberHit<'a>> {
        let phrases: Vec<Vec<String>> = labels.iter().map(|l| phrase_words(l)).collect();
        for i in 0..self.words.len() {
            for phrase in phrases.iter().filter(|p| !p.is_empty()) {
                let Some(hit) = self.match_at(i, phrase) else {
                    continue;
                };
                if let Some(number) = number_at(self.text, hit.at + hit.written.len()) {
                    return Some(number);
                }
            }
        }
        None
    }

    /// The first `chars` characters of the text, cut on a character boundary.
    pub fn excerpt(&self, chars: usize) -> &'a str {
        match self.text.char_indices().nth(chars) {
            Some((end, _)) => self.text.get(..end).unwrap_or(self.text),
            None => self.text,
        }
    }

    fn word(&self, i: usize) -> Option<&'a str> {
        let w = self.words.get(i)?;
        self.text.get(w.start..w.end)
    }

    fn match_at(&self, i: usize, phrase: &[String]) -> Option<Hit<'a>> {
        let first = self.words.get(i)?;
        let mut last = first;
        for (k, expected) in phrase.iter().enumerate() {
            let w = self.words.get(i + k)?;
            // Most words differ in length from the keyword: no need to look at their text.
            let quick_reject = w.ascii && expected.is_ascii() && w.end - w.start != expected.len();
            if quick_reject || w.clause != first.clause || !same_word(self.word(i + k)?, expected) {
                return None;
            }
            last = w;
        }
        Some(Hit {
            at: first.start,
            written: self.text.get(first.start..last.end)?,
        })
    }

    fn negated(&self, i: usize) -> bool {
        let Some(clause) = self.words.get(i).map(|w| w.clause) else {
            return false;
        };
        (i.saturating_sub(NEGATION_WINDOW)..i)
            .filter(|&j| self.words.get(j).is_some_and(|w| w.clause == clause))
            .filter_map(|j| self.word(j))
            .any(is_negator)
    }
}

fn push_word(
    text: &str,
    words: &mut Vec<Word>,
    start: usize,
    end: usize,
    clause: usize,
    ascii: bool,
) -> usize {
    words.push(Word {
        start,
        end,
        clause,
        ascii,
    });
    // A conjunction closes the clause before it and opens a new one after it.
    let conjunction = text
        .get(start..end)
        .is_some_and(|w| CLAUSE_WORDS.iter().any(|c| w.eq_ignore_ascii_case(c)));
    if conjunction {
        if let Some(last) = words.last_mut() {
            last.clause = clause + 1;
        }
        clause + 2
    } else {
        clause
    }
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}

/// Sentence and clause punctuation. A `.` between digits ("0.3") or inside a word ends nothing.
fn ends_clause(c: char, next: Option<char>) -> bool {
    match c {
        '.' => next.is_none_or(char::is_whitespace),
        '!' | '?' | ';' | ':' | ',' | '\n' | '\u{2014}' => true,
        _ => false,
    }
}

/// The words of a keyword, lowercased, split exactly as the text is.
fn phrase_words(phrase: &str) -> Vec<String> {
    Prose::new(phrase)
        .words
        .iter()
        .filter_map(|w| phrase.get(w.start..w.end))
        .map(|w| w.to_lowercase().replace('\u{2019}', "'"))
        .collect()
}

/// `word` equals the lowercase `expected`, ignoring case; a curly apostrophe reads as `'`.
fn same_word(word: &str, expected: &str) -> bool {
    if word.is_ascii() && expected.is_ascii() {
        return word.eq_ignore_ascii_case(expected);
    }
    word.chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\u{2019}' { '\'' } else { c })
        .eq(expected.chars())
}

fn is_negator(word: &str) -> bool {
    let lower = word.to_lowercase().replace('\u{2019}', "'");
    lower.ends_with("n't") || NEGATORS.contains(&lower.as_str())
}

/// A number starting at or shortly after `from`, past separators and connector words.
fn number_at(text: &str, from: usize) -> Option<NumberHit<'_>> {
    let rest = text.get(from..)?;
    let mut pos = 0usize;
    let mut connectors = 0;
    while pos <= LABEL_GAP {
        let tail = rest.get(pos..)?;
        let c = tail.chars().next()?;
        if c.is_whitespace()
            || matches!(
                c,
                ':' | '='
                    | '~'
                    | '\u{2248}'
                    | '('
                    | '"'
                    | '\''
                    | '*'
                    | '|'
                    | '>'
                    | '`'
                    | '\u{2192}'
            )
        {
            pos += c.len_utf8();
        } else if tail.starts_with("->") {
            pos += 2;
        } else if c.is_alphabetic() {
            let len = tail
                .find(|ch: char| !ch.is_alphabetic())
                .unwrap_or(tail.len());
            let word = tail.get(..len)?;
            if connectors >= 2 || !CONNECTORS.iter().any(|k| word.eq_ignore_ascii_case(k)) {
                return None;
            }
            connectors += 1;
            pos += len;
        } else {
            return parse_number(text, from + pos);
        }
    }
    None
}

/// `[+-−]digits[,ddd...][.digits]` or `[+-−].digits`, then an optional `%`; the number must not
/// run on into a word ("3rd").
fn parse_number(text: &str, at: usize) -> Option<NumberHit<'_>> {
    let s = text.get(at..)?;
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('\u{2212}') {
        negative = true;
        i = s.len() - rest.len();
    } else if let Some(&b) = bytes.first() {
        if b == b'-' || b == b'+' {
            negative = b == b'-';
            i = 1;
        }
    }
    let digits_start = i;
    let mut clean = String::from(if negative { "-" } else { "" });
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    clean.push_str(s.get(digits_start..i)?);
    let int_len = i - digits_start;
    // Thousands groups, only after one to three leading digits: "1,250,000".
    if (1..=3).contains(&int_len) {
        while bytes.get(i) == Some(&b',')
            && (1..=3).all(|k| bytes.get(i + k).is_some_and(u8::is_ascii_digit))
            && !bytes.get(i + 4).is_some_and(u8::is_ascii_digit)
        {
            clean.push_str(s.get(i + 1..i + 4)?);
            i += 4;
        }
    }
    let integer_end = i;
    let mut has_fraction = false;
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        has_fraction = true;
        clean.push('.');
        i += 1;
        let frac_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        clean.push_str(s.get(frac_start..i)?);
    }
    if integer_end == digits_start && !has_fraction {
        return None;
    }
    let mut end = i;
    let mut percent = false;
    let after = s.get(i..)?;
    let trimmed = after.trim_start_matches(' ');
    if trimmed.starts_with('%') {
        percent = true;
        end = i + (after.len() - trimmed.len()) + 1;
    } else if after.chars().next().is_some_and(char::is_alphanumeric) {
        return None;
    }
    let value: f64 = clean.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    let integer = if has_fraction {
        None
    } else {
        clean.trim_start_matches('-').parse::<i128>().ok()
    };
    Some(NumberHit {
        at,
        written: s.get(..end)?,
        value,
        percent,
        digits: Digits { negative, integer },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_whole_any_case_and_negation_aware() {
        let prose = Prose::new("Not critical, but HIGH. No need to exit.");
        assert!(prose.find("critical").hit.is_none()); // negated
        assert_eq!(prose.find("high").hit.map(|h| h.at), Some(18)); // whole word, any case
        assert!(prose.find("exit").hit.is_none());
        assert!(prose.find("hig").hit.is_none()); // not a word of the text
    }

    fn first(text: &str, kw: &str) -> Option<usize> {
        Prose::new(text).find(kw).hit.map(|h| h.at)
    }

    #[test]
    fn whole_words_any_case() {
        assert_eq!(first("a highlight, highly", "high"), None);
        assert_eq!(first("HIGH risk", "high"), Some(0));
        assert_eq!(first("risk: High.", "high"), Some(6));
        assert_eq!(first("Sell-everything now", "sell everything"), Some(0));
        assert_eq!(first("sell. everything", "sell everything"), None);
        assert_eq!(first("Größe ÜBER alles", "über"), Some(8));
    }

    #[test]
    fn negation_is_per_clause() {
        let p = Prose::new("no need to exit. We should exit now");
        let s = p.find("exit");
        assert_eq!(s.negated.map(|h| h.at), Some(11));
        assert_eq!(s.hit.map(|h| h.at), Some(27));
        assert_eq!(first("not critical", "critical"), None);
        assert_eq!(first("don't escalate", "escalate"), None);
        assert_eq!(first("don’t escalate", "escalate"), None);
        assert_eq!(first("not high but critical", "critical"), Some(13));
        assert_eq!(first("no, critical", "critical"), Some(4));
        // Five words back is outside the window.
        assert_eq!(first("no reason at all we would exit", "exit"), Some(26));
    }

    fn number(text: &str, label: &str) -> Option<(f64, bool, String)> {
        Prose::new(text)
            .number_after(&[label])
            .map(|n| (n.value, n.percent, n.written.to_owned()))
    }

    #[test]
    fn numbers_after_labels() {
        let n = |t| number(t, "pleasure").map(|x| x.0);
        assert_eq!(n("pleasure. 0.3"), None);
        assert_eq!(n("Pleasure of -0.5"), Some(-0.5));
        assert_eq!(n("pleasure=+.3"), Some(0.3));
        assert_eq!(n("**Pleasure**: 0.25,"), Some(0.25));
        assert_eq!(n("pleasure is about 0.7"), Some(0.7));
        assert_eq!(n("pleasure \u{2212}0.4"), Some(-0.4));
        assert_eq!(n("pleasure -> 1"), Some(1.0));
        assert_eq!(n("pleasure: high"), None);
        assert_eq!(n("pleasure 3rd"), None);
        assert_eq!(n("pleasure. 0.3"), None);
        assert_eq!(n("displeasure: 0.3"), None);
        assert_eq!(n("pleasure unknown, pleasure: 0.2"), Some(0.2));
        assert_eq!(
            number("confidence 80 %", "confidence"),
            Some((80.0, true, "80 %".into()))
        );
        assert_eq!(
            number("size usd: 1,250,000.5", "size usd").map(|x| x.0),
            Some(1_250_000.5)
        );
        assert_eq!(number("count: 1,2", "count").map(|x| x.0), Some(1.0));
    }

    #[test]
    fn integers_stay_exact() {
        let p = Prose::new("n: 170141183460469231731687303715884105727");
        let hit = p.number_after(&["n"]);
        assert_eq!(hit.and_then(|h| h.as_integer()), Some(i128::MAX));
        let p = Prose::new("n: 12.0 m: 12.5");
        assert_eq!(
            p.number_after(&["n"]).and_then(|h| h.as_integer()),
            Some(12)
        );
        assert_eq!(p.number_after(&["m"]).and_then(|h| h.as_integer()), None);
    }

    #[test]
    fn excerpt_cuts_on_char_boundaries() {
        let p = Prose::new("héllo wörld");
        assert_eq!(p.excerpt(2), "hé");
        assert_eq!(p.excerpt(100), "héllo wörld");
        assert_eq!(p.excerpt(0), "");
    }

    #[test]
    fn empty_and_odd_input() {
        let p = Prose::new("");
        assert!(p.is_empty());
        assert!(p.find("x").hit.is_none());
        assert!(p.number_after(&["x"]).is_none());
        assert!(Prose::new("x: -").number_after(&["x"]).is_none());
        assert!(Prose::new("x: .").number_after(&["x"]).is_none());
        assert!(Prose::new("x:").number_after(&["x"]).is_none());
        assert!(Prose::new("abc").find("!!").hit.is_none());
    }
}
