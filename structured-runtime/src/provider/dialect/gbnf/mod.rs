//! A GBNF grammar for llama.cpp's native grammar engine (the request's `grammar` field),
//! compiled from the one schema view, so any llama.cpp build holds the model to what its
//! JSON-Schema converter leaves out: fractional ranges, formats, maps and their keys, lengths.
//!
//! The grammar is *sound*: everything it lets the model write is a value the schema accepts
//! (the validator of record still decides; a property test derives random answers from each
//! grammar and checks them with it). It is not complete: numbers are written with a bounded
//! number of digits and no exponent, properties in schema order, whitespace bounded, and free
//! text within a budget ([`GrammarBudget`]: a string without `maxLength`, a list or map without
//! a count limit), each budget reported. What it cannot express (`uniqueItems`, `multipleOf`,
//! `not`, an unsupported pattern, ...) is named by path in [`Grammar::unenforced`] and left to
//! the validator, never dropped without a word.
//!
//! ```
//! use structured_runtime::provider::dialect::{grammar, GrammarBudget};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"confidence": {"type": "number", "minimum": 0, "maximum": 1}},
//!     "required": ["confidence"],
//!     "additionalProperties": false
//! });
//! let g = grammar(&schema, GrammarBudget::default()).unwrap();
//! assert!(g.text.starts_with("root ::= "));
//! assert!(g.unenforced.is_empty());
//! ```

mod number;
mod string;

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::schema::checks::asserts_nothing;
use crate::schema::dialect::{Budgeted, LowerError, LowerReport, SchemaTarget, Unenforced};
use crate::schema::node::{Additional, JsonType, Node, RefError, MAX_DEPTH};
use crate::schema::Pointer;
use number::{repeat, Limit};
use string::{json_literal, CHAR, CHAR_RULE};

/// Rules a grammar has at most, and its text's size at most: a schema that would need more is
/// refused before any request.
pub const MAX_RULES: usize = 20_000;
const MAX_TEXT: usize = 4 << 20;

/// Limits the grammar adds where the schema sets none, so a model that loops inside a string
/// or a list ends with a closed value instead of running out of tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GrammarBudget {
    /// Characters of a string without `maxLength`.
    pub string_chars: usize,
    /// Items of a list, or entries of a map, without a count limit.
    pub items: usize,
    /// The answer's token limit, when the budgets are to fit it: if every budgeted string
    /// written in full (as often as the lists around it allow) would pass half of it at a
    /// token a character (what a model looping over digits spends), each string's budget is
    /// cut to fit (to no less than 16 characters), so a model that loops in every string
    /// still closes the value.
    pub fit_tokens: Option<u32>,
}

impl Default for GrammarBudget {
    /// The budget for a 4,096-token answer ([`GrammarBudget::for_max_tokens`]).
    fn default() -> Self {
        GrammarBudget::for_max_tokens(4096)
    }
}

impl GrammarBudget {
    /// A budget that fits an answer of `max_tokens`: a string may take a quarter of them in
    /// characters, at least 16 and at most 2,000, cut further when the schema has many
    /// strings ([`GrammarBudget::fit_tokens`]); a list or map up to 4 items under 1,024
    /// tokens, 8 under 4,096, 16 above.
    pub fn for_max_tokens(max_tokens: u32) -> Self {
        let tokens = max_tokens as usize;
        GrammarBudget {
            string_chars: (tokens / 4).clamp(MIN_STRING_CHARS, 2_000),
            items: match tokens {
                0..1024 => 4,
                1024..4096 => 8,
                _ => 16,
            },
            fit_tokens: Some(max_tokens),
        }
    }
}

/// A budgeted string's characters at least, however many strings share the answer.
const MIN_STRING_CHARS: usize = 16;

/// A compiled grammar, and what it leaves to the validator.
#[derive(Debug, Clone, PartialEq)]
pub struct Grammar {
    /// The GBNF text; its start rule is `root`.
    pub text: String,
    /// Keywords not enforced, by path.
    pub unenforced: Vec<Unenforced>,
    /// Limits added, by path.
    pub budgets: Vec<Budgeted>,
}

/// The grammar for `schema`, or every construct it cannot be built for (an unresolvable
/// `$ref`, a range no number fits, a schema too large).
pub fn grammar(schema: &Value, budget: GrammarBudget) -> Result<Grammar, LowerReport> {
    let (first, slots) = compile(schema, budget)?;
    let Some(tokens) = budget.fit_tokens else {
        return Ok(first);
    };
    // A looping model can spend a token a character (a list of numbers, digit by digit): half
    // the answer for free text, the rest for keys, numbers, punctuation and whitespace.
    let allowance = tokens as usize / 2;
    if slots == 0 || slots.saturating_mul(budget.string_chars) <= allowance {
        return Ok(first);
    }
    let string_chars = (allowance / slots).clamp(MIN_STRING_CHARS, budget.string_chars);
    compile(
        schema,
        GrammarBudget {
            string_chars,
            ..budget
        },
    )
    .map(|(g, _)| g)
}

/// The grammar, and how many budgeted strings it can write in full (each counted as often as
/// the lists and maps around it allow).
fn compile(schema: &Value, budget: GrammarBudget) -> Result<(Grammar, usize), LowerReport> {
    let mut c = Compiler {
        budget,
        rules: Vec::new(),
        refs: HashMap::new(),
        helpers: Helpers::default(),
        unenforced: Vec::new(),
        budgets: Vec::new(),
        errors: Vec::new(),
        size: 0,
        multiplier: 1,
        slots: 0,
    };
    let root = c.value(Node::root(schema), &Pointer::root());
    let mut text = format!("root ::= {root}\n");
    for (name, body) in &c.rules {
        text.push_str(&format!("{name} ::= {body}\n"));
    }
    c.helpers.write(&mut text, budget);
    if text.len() > MAX_TEXT && c.errors.is_empty() {
        c.error(
            &Pointer::root(),
            format!("the grammar would be larger than {MAX_TEXT} bytes"),
        );
    }
    if !c.errors.is_empty() {
        return Err(LowerReport {
            target: SchemaTarget::LlamaCpp,
            errors: c.errors,
        });
    }
    Ok((
        Grammar {
            text,
            unenforced: c.unenforced,
            budgets: c.budgets,
        },
        c.slots,
    ))
}

/// Keywords that leave a grammar nothing to enforce at their node: those that assert nothing
/// ([`asserts_nothing`]) and the schema's own structure.
fn only_annotates(keyword: &str) -> bool {
    asserts_nothing(keyword)
        || ["$schema", "$id", "$anchor", "$defs", "definitions", "$ref"].contains(&keyword)
}

/// Keywords a grammar cannot express.
const INEXPRESSIBLE: &[(&str, &str)] = &[
    ("not", "a grammar cannot exclude what a schema matches"),
    ("if", "conditional schemas"),
    ("then", "conditional schemas"),
    ("else", "conditional schemas"),
    ("dependentSchemas", "conditional schemas"),
    ("dependentRequired", "conditional properties"),
    ("dependencies", "conditional properties"),
    ("patternProperties", "property names by pattern"),
    ("unevaluatedProperties", "evaluation across branches"),
    ("unevaluatedItems", "evaluation across branches"),
    ("contains", "an item somewhere in the list"),
    ("minContains", "an item somewhere in the list"),
    ("maxContains", "an item somewhere in the list"),
    ("multipleOf", "divisibility"),
];

/// Shared rules, written once when used.
#[derive(Default)]
struct Helpers {
    any: bool,
}

impl Helpers {
    fn write(&self, text: &mut String, budget: GrammarBudget) {
        let items = budget.items.max(1) - 1;
        if self.any {
            text.push_str(
                "value ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n",
            );
            text.push_str(&format!(
                "object ::= \"{{\" ws (string ws \":\" ws value (\",\" ws string ws \":\" ws value){{0,{items}}})? ws \"}}\"\n"
            ));
            text.push_str(&format!(
                "array ::= \"[\" ws (value (\",\" ws value){{0,{items}}})? ws \"]\"\n"
            ));
            text.push_str(&format!(
                "string ::= \"\\\"\" {} \"\\\"\"\n",
                repeat(CHAR, 0, budget.string_chars)
            ));
            text.push_str("number ::= \"-\"? ([0-9] | [1-9] [0-9]{1,14}) (\".\" [0-9]{1,6})?\n");
        }
        text.push_str(&format!("{CHAR} ::= {CHAR_RULE}\n"));
        // One space or line break at most between tokens: whitespace a looping model could
        // spend the answer on is bounded by the value's own size.
        text.push_str("ws ::= [ \\n]?\n");
    }
}

struct Compiler<'s> {
    budget: GrammarBudget,
    rules: Vec<(String, String)>,
    /// `$ref` targets already given a rule.
    refs: HashMap<&'s str, String>,
    helpers: Helpers,
    unenforced: Vec<Unenforced>,
    budgets: Vec<Budgeted>,
    errors: Vec<LowerError>,
    size: usize,
    /// How many times the node being compiled can be written in one answer (the counts of the
    /// lists and maps around it).
    multiplier: usize,
    /// Budgeted strings, each counted by its multiplier.
    slots: usize,
}

impl<'s> Compiler<'s> {
    fn error(&mut self, path: &Pointer, reason: impl Into<String>) {
        if self.errors.len() < 100 {
            self.errors.push(LowerError {
                target: SchemaTarget::LlamaCpp,
                path: path.clone(),
                reason: reason.into(),
            });
        }
    }

    fn leave(&mut self, path: &Pointer, keyword: &str, reason: impl Into<String>) {
        if self.unenforced.len() < 1_000 {
            self.unenforced.push(Unenforced {
                path: path.clone(),
                keyword: keyword.to_owned(),
                reason: reason.into(),
            });
        }
    }

    /// Records a limit the grammar adds where the schema sets none.
    fn budgeted(&mut self, path: &Pointer, keyword: &'static str, limit: usize) {
        self.budgets.push(Budgeted {
            path: path.clone(),
            keyword,
            limit,
        });
    }

    /// A new rule named after `hint`; returns its name.
    fn rule(&mut self, hint: &str, body: String) -> String {
        let (slot, name) = self.reserve(hint);
        self.define(slot, body);
        name
    }

    /// A place for a rule named after `hint`, defined later ([`Compiler::define`]): its index
    /// and its name.
    fn reserve(&mut self, hint: &str) -> (usize, String) {
        let mut base: String = hint
            .chars()
            .map(|c| match c {
                'a'..='z' | '0'..='9' => c,
                'A'..='Z' => c.to_ascii_lowercase(),
                _ => '-',
            })
            .collect();
        base.truncate(40);
        let base = base.trim_matches('-');
        let base = if base.is_empty() { "node" } else { base };
        let slot = self.rules.len();
        let name = format!("{base}-{slot}");
        self.rules.push((name.clone(), String::new()));
        (slot, name)
    }

    fn define(&mut self, slot: usize, body: String) {
        self.size += body.len();
        if self.rules.len() > MAX_RULES || self.size > MAX_TEXT {
            if self.errors.is_empty() {
                self.error(
                    &Pointer::root(),
                    format!(
                        "the grammar would need more than {MAX_RULES} rules or {MAX_TEXT} bytes"
                    ),
                );
            }
            return;
        }
        if let Some(rule) = self.rules.get_mut(slot) {
            rule.1 = body;
        }
    }

    /// Any JSON value (a schema `true`, a node without a type): an object inside it may
    /// repeat a key, which the grammar cannot prevent, so the node is named.
    fn any_at(&mut self, path: &Pointer) -> String {
        self.leave(
            path,
            "true",
            "any JSON value: an object in it may repeat a key",
        );
        self.any()
    }

    /// The generic value rule, where an error is already recorded.
    fn any(&mut self) -> String {
        self.helpers.any = true;
        "value".to_owned()
    }

    /// The expression for a value `node` accepts.
    fn value(&mut self, node: Node<'s>, path: &Pointer) -> String {
        if node.too_deep() {
            self.error(path, format!("nested deeper than {MAX_DEPTH} levels"));
            return self.any();
        }
        if !self.errors.is_empty() && self.rules.len() > MAX_RULES {
            return self.any();
        }
        let map = match node.value() {
            Value::Bool(true) => return self.any_at(path),
            Value::Bool(false) => {
                self.error(path, "the schema `false` admits no value");
                return self.any();
            }
            Value::Object(map) => map,
            _ => {
                self.error(path, "expected a schema object");
                return self.any();
            }
        };
        for (keyword, reason) in INEXPRESSIBLE {
            if map.contains_key(*keyword) {
                self.leave(path, keyword, *reason);
            }
        }
        if let Some(reference) = map.get("$ref") {
            let assertions = map.keys().any(|k| !only_annotates(k));
            if assertions {
                self.leave(
                    path,
                    "$ref",
                    "keywords beside `$ref` are left to the validator",
                );
            }
            return self.reference(node, reference, path);
        }
        let types = node.types();
        if map.contains_key("const") || map.contains_key("enum") {
            // The listed values are written as they are: any other rule beside them (a
            // pattern, a range) is the validator's to check.
            let beside = map
                .keys()
                .find(|k| !only_annotates(k) && !matches!(k.as_str(), "const" | "enum" | "type"));
            if let Some(keyword) = beside {
                self.leave(path, keyword, "a rule beside listed values");
            }
        }
        if let Some(value) = map.get("const") {
            if !types.allows(value) {
                self.error(path, "the `const` value does not have the node's type");
            }
            return json_literal(value);
        }
        if let Some(values) = node.enum_values() {
            let alternatives: Vec<String> = values
                .iter()
                .filter(|v| types.allows(v))
                .map(json_literal)
                .collect();
            if alternatives.is_empty() {
                self.error(path, "no `enum` value has the node's type");
                return self.any();
            }
            return format!("({})", alternatives.join(" | "));
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                return self.branches(node, map, keyword, branches, path);
            }
        }
        if let Some(Value::Array(all)) = map.get("allOf") {
            let others = map.keys().any(|k| k != "allOf" && !only_annotates(k));
            match all.as_slice() {
                [only] if !others => {
                    return self.value(node.child(only), &path.key("allOf").index(0));
                }
                _ => {
                    self.leave(path, "allOf", "an intersection of schemas");
                    return self.any();
                }
            }
        }
        let mut list: Vec<JsonType> = types.iter().collect();
        if list.is_empty() {
            // No `type`: the kind the node's keywords describe (a subset of what it allows).
            let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
            if has(&[
                "properties",
                "required",
                "additionalProperties",
                "propertyNames",
            ]) {
                list.push(JsonType::Object);
            } else if has(&["items", "prefixItems", "minItems", "maxItems"]) {
                list.push(JsonType::Array);
            } else if has(&["minLength", "maxLength", "pattern", "format"]) {
                list.push(JsonType::String);
            } else if has(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
                list.push(JsonType::Number);
            } else {
                return self.any_at(path);
            }
        }
        let alternatives: Vec<String> = list.iter().map(|t| self.typed(node, *t, path)).collect();
        match alternatives.len() {
            1 => alternatives.into_iter().next().unwrap_or_default(),
            _ => format!("({})", alternatives.join(" | ")),
        }
    }

    fn reference(&mut self, node: Node<'s>, reference: &'s Value, path: &Pointer) -> String {
        let Some(reference) = reference.as_str() else {
            self.error(path, "`$ref` is not a string");
            return self.any();
        };
        if let Some(name) = self.refs.get(reference) {
            return name.clone();
        }
        let target = match node.lookup(reference) {
            Ok(target) => target,
            Err(e) => {
                let reason = match e {
                    RefError::NotLocal => "is not a local reference",
                    RefError::Unresolved => "does not resolve",
                    RefError::TooDeep => "is followed too deep",
                };
                self.error(path, format!("`$ref` {reference:?} {reason}"));
                return self.any();
            }
        };
        let (slot, name) = self.reserve(reference.trim_start_matches("#/"));
        self.refs.insert(reference, name.clone());
        let at = Pointer::from_fragment(reference).unwrap_or_else(|| path.clone());
        let body = self.value(target, &at);
        self.define(slot, body);
        name
    }

    fn branches(
        &mut self,
        node: Node<'s>,
        map: &'s Map<String, Value>,
        keyword: &str,
        branches: &'s [Value],
        path: &Pointer,
    ) -> String {
        let beside = map.keys().any(|k| k != keyword && !only_annotates(k));
        if beside {
            self.leave(
                path,
                keyword,
                "keywords beside the branches are left to the validator",
            );
        }
        if keyword == "oneOf" && branches.len() > 1 {
            self.leave(
                path,
                "oneOf",
                "a value that two branches accept is written as often as one",
            );
        }
        let alternatives: Vec<String> = branches
            .iter()
            .enumerate()
            .map(|(i, b)| self.value(node.child(b), &path.key(keyword).index(i)))
            .collect();
        if alternatives.is_empty() {
            self.error(path, format!("`{keyword}` has no branch"));
            return self.any();
        }
        format!("({})", alternatives.join(" | "))
    }

    fn typed(&mut self, node: Node<'s>, t: JsonType, path: &Pointer) -> String {
        match t {
            JsonType::Null => "\"null\"".to_owned(),
            JsonType::Boolean => "(\"true\" | \"false\")".to_owned(),
            JsonType::Integer | JsonType::Number => self.number(node, t, path),
            JsonType::String => self.string(node, path),
            JsonType::Array => self.array(node, path),
            JsonType::Object => self.object(node, path),
        }
    }

    fn number(&mut self, node: Node<'s>, t: JsonType, path: &Pointer) -> String {
        let limit = |keyword: &str, exclusive: bool| match node.get(keyword) {
            Some(Value::Number(value)) => Some(Limit { value, exclusive }),
            _ => None,
        };
        for keyword in ["exclusiveMinimum", "exclusiveMaximum"] {
            if matches!(node.get(keyword), Some(Value::Bool(_))) {
                self.leave(path, keyword, "a draft-4 boolean form");
            }
        }
        // Both a bound and its exclusive form: each is a lower (upper) bound, both hold.
        let mins = [limit("minimum", false), limit("exclusiveMinimum", true)];
        let maxs = [limit("maximum", false), limit("exclusiveMaximum", true)];
        let integer = t == JsonType::Integer;
        match number::range(pick(mins, true), pick(maxs, false), integer) {
            Ok(expr) => self.rule(&format!("{}-num", last(path)), expr),
            Err(e) => {
                self.error(path, e);
                self.any()
            }
        }
    }

    fn string(&mut self, node: Node<'s>, path: &Pointer) -> String {
        let count = |k: &str| node.get(k).and_then(Value::as_u64).map(|n| n as usize);
        let (min, max) = (count("minLength"), count("maxLength"));
        let quoted = |inner: String| format!("\"\\\"\" {inner} \"\\\"\"");
        if let Some(Value::String(f)) = node.get("format") {
            if let Some(inner) = string::format(f) {
                if min.is_some() || max.is_some() || node.has("pattern") {
                    self.leave(
                        path,
                        "format",
                        "lengths and patterns beside a format are left to the validator",
                    );
                }
                let body = quoted(inner);
                return self.rule(&format!("{}-{f}", last(path)), body);
            }
            self.leave(
                path,
                "format",
                format!("the format {f:?} is not written by the grammar"),
            );
        }
        if let Some(Value::String(p)) = node.get("pattern") {
            match string::pattern(p, self.budget.string_chars) {
                Ok(inner) => {
                    if min.is_some() || max.is_some() {
                        self.leave(
                            path,
                            "maxLength",
                            "lengths beside a pattern are left to the validator",
                        );
                    }
                    let body = quoted(inner);
                    return self.rule(&format!("{}-pattern", last(path)), body);
                }
                Err(why) => self.leave(path, "pattern", why),
            }
        }
        let min = min.unwrap_or(0);
        let max = match max {
            Some(max) => max,
            None => {
                let limit = self.budget.string_chars.max(min);
                self.budgeted(path, "maxLength", limit);
                self.slots = self.slots.saturating_add(self.multiplier);
                limit
            }
        };
        if min > max {
            self.error(path, "`minLength` is above `maxLength`");
            return self.any();
        }
        quoted(repeat(CHAR, min, max))
    }

    fn array(&mut self, node: Node<'s>, path: &Pointer) -> String {
        let count = |k: &str| node.get(k).and_then(Value::as_u64).map(|n| n as usize);
        let prefix: Vec<Node<'s>> = match node.get("prefixItems") {
            Some(Value::Array(p)) => p.iter().map(|s| node.child(s)).collect(),
            _ => Vec::new(),
        };
        let rest = match node.get("items") {
            Some(Value::Bool(false)) => None,
            Some(items @ (Value::Object(_) | Value::Bool(true))) => Some(node.child(items)),
            // `items` absent: any value, named when one is written ([`Compiler::any_at`]).
            _ => Some(node.child(&TRUE)),
        };
        let min = count("minItems").unwrap_or(0);
        let max = match (count("maxItems"), rest) {
            (Some(max), None) => max.min(prefix.len()),
            (Some(max), Some(_)) => max,
            (None, None) => prefix.len(),
            (None, Some(_)) => {
                let limit = (prefix.len() + self.budget.items).max(min);
                self.budgeted(path, "maxItems", limit);
                limit
            }
        };
        if min > max {
            self.error(
                path,
                "no count of items fits `minItems`, `maxItems` and the tuple",
            );
            return self.any();
        }
        if node.get("uniqueItems") == Some(&Value::Bool(true)) && max > 1 {
            self.leave(path, "uniqueItems", "a grammar cannot keep items apart");
        }
        let (slot, name) = self.reserve(&format!("{}-list", last(path)));
        let mut positions: Vec<String> = prefix
            .iter()
            .enumerate()
            .take(max)
            .map(|(i, p)| self.value(*p, &path.key("prefixItems").index(i)))
            .collect();
        let fixed = positions.len();
        let sep = "\",\" ws";
        // The items after the tuple: `needed` of them, then up to `optional` more.
        let tail = match rest {
            Some(items) if max > fixed => {
                let outer = self.multiplier;
                self.multiplier = outer.saturating_mul(max - fixed);
                let item = self.value(items, &path.key("items"));
                self.multiplier = outer;
                let needed = min.saturating_sub(fixed);
                let optional = max - fixed - needed;
                let more = |n: usize, m: usize| repeat(&format!("({sep} {item})"), n, m);
                if fixed > 0 {
                    join(&[more(needed, needed), more(0, optional)])
                } else if needed > 0 {
                    join(&[
                        item.clone(),
                        more(needed - 1, needed - 1),
                        more(0, optional),
                    ])
                } else {
                    format!("({})?", join(&[item.clone(), more(0, optional - 1)]))
                }
            }
            _ => String::new(),
        };
        // The tuple from its end: a position past `minItems` may end the list.
        let mut inner = tail;
        for i in (0..fixed).rev() {
            let this = positions.pop().unwrap_or_default();
            let lead = if i == 0 {
                String::new()
            } else {
                sep.to_owned()
            };
            let seq = join(&[lead, this, inner]);
            inner = if i < min { seq } else { format!("({seq})?") };
        }
        let body = join(&["\"[\" ws".to_owned(), inner, "ws \"]\"".to_owned()]);
        self.define(slot, body);
        name
    }

    fn object(&mut self, node: Node<'s>, path: &Pointer) -> String {
        let declared: Vec<(&'s str, Node<'s>)> = node.properties().collect();
        let undeclared: Vec<&'s str> = node
            .required()
            .filter(|r| !declared.iter().any(|(n, _)| n == r))
            .collect();
        if declared.is_empty() && undeclared.is_empty() {
            return self.map(node, path);
        }
        let (slot, name) = self.reserve(&format!("{}-object", last(path)));
        let mut members = Vec::new();
        for (key, p) in &declared {
            let at = path.key("properties").key(key);
            let value = self.value(*p, &at);
            members.push((member(key, &value), node.is_required(key)));
        }
        for key in undeclared {
            let value = match node.additional() {
                Additional::Schema(s) => self.value(s, &path.key("additionalProperties")),
                Additional::Allowed(false) => {
                    self.error(path, format!("{key:?} is required but not allowed"));
                    self.any()
                }
                _ => self.any_at(path),
            };
            members.push((member(key, &value), true));
        }
        let count = |k: &str| node.get(k).and_then(Value::as_u64).map(|n| n as usize);
        let required = members.iter().filter(|(_, r)| *r).count();
        if count("minProperties").is_some_and(|m| m > required) {
            self.leave(path, "minProperties", "a count of optional properties");
        }
        if count("maxProperties").is_some_and(|m| m < members.len()) {
            self.leave(path, "maxProperties", "a count of optional properties");
        }
        let body = self.sequence(&name, &members);
        let body = join(&["\"{\" ws".to_owned(), body, "ws \"}\"".to_owned()]);
        self.define(slot, body);
        name
    }

    /// Members in order, each `(expr, required)`, separated by commas: one rule per place and
    /// whether a member was written before it, when some are optional.
    fn sequence(&mut self, hint: &str, members: &[(String, bool)]) -> String {
        let sep = "\",\" ws ";
        if members.iter().all(|(_, r)| *r) {
            return members
                .iter()
                .map(|(m, _)| m.clone())
                .collect::<Vec<_>>()
                .join(&format!(" {sep}"));
        }
        // after[first] = the expression for the members from i on.
        let mut after: [String; 2] = [String::new(), String::new()];
        for (i, (m, required)) in members.iter().enumerate().rev() {
            let mut next: [String; 2] = [String::new(), String::new()];
            for first in [false, true] {
                let lead = if first { "" } else { sep };
                let with = format!("{lead}{m} {}", after[0]).trim_end().to_owned();
                let expr = if *required {
                    with
                } else if after[usize::from(first)].is_empty() {
                    format!("({with})?")
                } else {
                    format!("({with} | {})", after[usize::from(first)])
                };
                next[usize::from(first)] = self.rule(&format!("{hint}-{i}"), expr);
            }
            after = next;
        }
        after[1].clone()
    }

    /// An object without declared properties: keys by `propertyNames`, values by
    /// `additionalProperties`, counted by `minProperties`/`maxProperties` (or the budget).
    fn map(&mut self, node: Node<'s>, path: &Pointer) -> String {
        let outer = self.multiplier;
        let entries = node
            .get("maxProperties")
            .and_then(Value::as_u64)
            .map_or(self.budget.items, |n| n as usize);
        self.multiplier = outer.saturating_mul(entries.max(1));
        let out = self.map_entries(node, path);
        self.multiplier = outer;
        out
    }

    fn map_entries(&mut self, node: Node<'s>, path: &Pointer) -> String {
        let count = |k: &str| node.get(k).and_then(Value::as_u64).map(|n| n as usize);
        let min = count("minProperties").unwrap_or(0);
        let value = match node.additional() {
            Additional::Schema(s) => self.value(s, &path.key("additionalProperties")),
            Additional::Allowed(false) => {
                if min > 0 {
                    self.error(path, "`minProperties` on an object that allows no property");
                }
                return "\"{\" ws \"}\"".to_owned();
            }
            _ => self.any_at(path),
        };
        let names = node.get("propertyNames").map(|n| node.child(n).target());
        let keys: Option<Vec<&'s str>> = names
            .and_then(|n| n.enum_values())
            .and_then(|values| values.iter().map(Value::as_str).collect());
        let (slot, name) = self.reserve(&format!("{}-map", last(path)));
        let body = match keys {
            Some(keys) if keys.len() <= 16 => {
                let max = count("maxProperties").unwrap_or(keys.len()).min(keys.len());
                self.enumerated(&name, &keys, &value, min, max, path)
            }
            _ => {
                let key = match names {
                    Some(n) => self.string(n, &path.key("propertyNames")),
                    None => {
                        self.helpers.any = true;
                        "string".to_owned()
                    }
                };
                self.leave(
                    path,
                    "additionalProperties",
                    "a key may be written twice: a grammar cannot keep open keys apart",
                );
                let max = match count("maxProperties") {
                    Some(max) => max,
                    None => {
                        let limit = self.budget.items.max(min);
                        self.budgeted(path, "maxProperties", limit);
                        limit
                    }
                };
                if min > max {
                    self.error(path, "`minProperties` is above `maxProperties`");
                    return self.any();
                }
                let kv = format!("{key} ws \":\" ws {value}");
                let more = |n: usize, m: usize| repeat(&format!("(\",\" ws {kv})"), n, m);
                let entries = match (min, max) {
                    (_, 0) => String::new(),
                    (0, max) => format!("({kv} {})?", more(0, max - 1)),
                    (min, max) => format!("{kv} {} {}", more(min - 1, min - 1), more(0, max - min)),
                };
                entries.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        };
        let body = if body.trim().is_empty() {
            "\"{\" ws \"}\"".to_owned()
        } else {
            format!("\"{{\" ws {body} ws \"}}\"")
        };
        self.define(slot, body);
        name
    }

    /// A map whose keys are listed: each at most once, in the listed order, between `min`
    /// and `max` of them.
    fn enumerated(
        &mut self,
        hint: &str,
        keys: &[&str],
        value: &str,
        min: usize,
        max: usize,
        path: &Pointer,
    ) -> String {
        if min > max {
            self.error(
                path,
                "no count of keys fits `minProperties` and `maxProperties`",
            );
            return String::new();
        }
        // state[c] for the keys from j on, with c written before: None when it cannot end
        // with at least `min`.
        let k = keys.len();
        let mut after: Vec<Option<String>> =
            (0..=max).map(|c| (c >= min).then(String::new)).collect();
        for j in (0..k).rev() {
            let mut here: Vec<Option<String>> = vec![None; max + 1];
            for (c, slot) in here.iter_mut().enumerate() {
                let sep = if c == 0 { "" } else { "\",\" ws " };
                let key = keys.get(j).copied().unwrap_or_default();
                let with = (c < max)
                    .then(|| after.get(c + 1).cloned().flatten())
                    .flatten()
                    .map(|rest| {
                        format!("{sep}{} {rest}", member(key, value))
                            .trim_end()
                            .to_owned()
                    });
                let without = after.get(c).cloned().flatten();
                let expr = match (with, without) {
                    (Some(w), Some(o)) if o.is_empty() => Some(format!("({w})?")),
                    (Some(w), Some(o)) => Some(format!("({w} | {o})")),
                    (Some(w), None) => Some(w),
                    (None, Some(o)) => Some(o),
                    (None, None) => None,
                };
                *slot = expr.map(|e| {
                    if e.is_empty() {
                        e
                    } else {
                        self.rule(&format!("{hint}-{j}-{c}"), e)
                    }
                });
            }
            after = here;
        }
        after.first().cloned().flatten().unwrap_or_default()
    }
}

static TRUE: Value = Value::Bool(true);

/// The non-empty parts, separated by spaces.
fn join(parts: &[String]) -> String {
    let parts: Vec<&str> = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    parts.join(" ")
}

/// `"key": value`.
fn member(key: &str, value: &str) -> String {
    format!("{} ws \":\" ws {value}", json_literal(&Value::from(key)))
}

/// The last segment of a path, for a rule's name.
fn last(path: &Pointer) -> String {
    let text = path.as_str();
    let name = text
        .rsplit('/')
        .find(|s| !s.is_empty() && *s != "properties" && *s != "items");
    name.unwrap_or("root").to_owned()
}

/// The tightest of a bound and its exclusive form (`lower`: the larger).
fn pick(limits: [Option<Limit<'_>>; 2], lower: bool) -> Option<Limit<'_>> {
    match limits {
        [Some(a), Some(b)] => {
            let (x, y) = (
                a.value.as_f64().unwrap_or(0.0),
                b.value.as_f64().unwrap_or(0.0),
            );
            // Equal values: the exclusive one is tighter.
            let a_tighter = if lower { x > y } else { x < y };
            Some(if a_tighter { a } else { b })
        }
        [a, b] => a.or(b),
    }
}
