//! What the provider side computes from a schema once and keeps with it: each target's
//! lowering, and the request fragments built from it. It lives in the schema's slot for the
//! layers above ([`ResponseSchema`] keeps it without knowing what it is), so a derived type's
//! schema, built once per process, is lowered once per target and its fragments built once per
//! provider, mode and target however many requests use them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::provider::capabilities::ProviderKind;
use crate::provider::dialect::{lower_reporting, GrammarBudget, Lowered};
use crate::read::{Reshape, StructuredOutputMode};
use crate::schema::dialect::{
    Budgeted, Dropped, Kept, LowerError, LowerReport, Moved, SchemaTarget, Unenforced,
};
use crate::schema::{Pointer, ResponseSchema};

/// Fields a request for a schema always carries, as a value and as the JSON text of each
/// member (so a request body is written without copying the schema node by node).
#[derive(Debug)]
pub(crate) struct Fragment {
    /// The fields, to merge into a body.
    pub(crate) value: Value,
    /// Each member's key, and the member written as JSON (`"key":value`), to splice into a
    /// body's text.
    pub(crate) members: Vec<(String, String)>,
    /// For a grammar (llama.cpp): what it leaves to the validator and the limits it adds, kept
    /// with it so a run says so without compiling it again.
    pub(crate) grammar_limits: Option<(Vec<Unenforced>, Vec<Budgeted>)>,
}

impl Fragment {
    pub(crate) fn new(value: Value) -> Fragment {
        let members = value
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), format!("{}:{v}", Value::from(k.as_str()))))
            .collect();
        Fragment {
            value,
            members,
            grammar_limits: None,
        }
    }
}

/// Which fragment: what the request is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FragmentKey {
    /// The schema lowered for `target`, in `provider`'s request for `mode`.
    Schema {
        provider: ProviderKind,
        mode: StructuredOutputMode,
        target: SchemaTarget,
    },
    /// A grammar compiled within `budget` (every field of it: a budget fitted to a token limit
    /// and one given as is may start from the same numbers and end in different grammars).
    Grammar {
        provider: ProviderKind,
        mode: StructuredOutputMode,
        budget: GrammarBudget,
    },
}

/// What the provider side keeps with one schema.
struct SchemaCache {
    /// Each target's lowering, on first use, by the target's place in [`SchemaTarget::ALL`]
    /// (found among six, where a hash of it cost more).
    lowered: [OnceLock<Result<Lowered, LowerReport>>; SchemaTarget::ALL.len()],
    /// Request fragments, on first use.
    fragments: Mutex<HashMap<FragmentKey, Arc<Fragment>>>,
}

impl Default for SchemaCache {
    fn default() -> Self {
        SchemaCache {
            lowered: std::array::from_fn(|_| OnceLock::new()),
            fragments: Mutex::default(),
        }
    }
}

/// The cache of `schema`; an error naming `target` only were the schema's slot taken by
/// another type, which the crate never does.
fn cache(schema: &ResponseSchema, target: SchemaTarget) -> Result<&SchemaCache, LowerReport> {
    schema
        .layer_cache::<SchemaCache>()
        .ok_or_else(|| LowerReport {
            target,
            errors: vec![LowerError {
                target,
                path: Pointer::root(),
                reason: "the schema's cache holds something else (a bug in this crate)".into(),
            }],
        })
}

/// `schema`'s lowering for `target`, made on first use and kept.
pub(crate) fn lowering(
    schema: &ResponseSchema,
    target: SchemaTarget,
) -> Result<&Lowered, LowerReport> {
    let lowered = &cache(schema, target)?.lowered;
    let place = SchemaTarget::ALL.iter().position(|t| *t == target);
    match place.and_then(|i| lowered.get(i)) {
        Some(slot) => slot
            .get_or_init(|| lower_reporting(schema.schema(), target))
            .as_ref()
            .map_err(Clone::clone),
        None => Err(LowerReport {
            target,
            errors: Vec::new(),
        }),
    }
}

/// The most request fragments kept with one schema. Their keys are few for schemas sent as
/// they are (a provider, a mode, a target), but a grammar's budget fitted to each request's
/// token limit is a key of its own: requests naming ever other limits would keep a grammar for
/// each. A new one past this many starts the kept ones again from it, so those in use are kept
/// again as they are used: each is built again at most once for every `MAX_FRAGMENTS - 1` new
/// ones.
pub(crate) const MAX_FRAGMENTS: usize = 64;

/// The request fragment `key` names for `schema`, built by `build` on first use and kept (with
/// [`MAX_FRAGMENTS`] at most).
pub(crate) fn fragment(
    schema: &ResponseSchema,
    key: FragmentKey,
    target: SchemaTarget,
    build: impl FnOnce(&ResponseSchema) -> Result<Fragment, LowerReport>,
) -> Result<Arc<Fragment>, LowerReport> {
    let fragments = &cache(schema, target)?.fragments;
    let cached = |fragments: &HashMap<FragmentKey, Arc<Fragment>>| fragments.get(&key).cloned();
    if let Some(found) = cached(&fragments.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(found);
    }
    // Built outside the lock: two threads racing on the first request each build one, and
    // the first stored is kept.
    let built = Arc::new(build(schema)?);
    let mut fragments = fragments.lock().unwrap_or_else(|e| e.into_inner());
    if fragments.len() >= MAX_FRAGMENTS && !fragments.contains_key(&key) {
        fragments.clear();
    }
    Ok(Arc::clone(fragments.entry(key).or_insert(built)))
}

/// What lowering gives for a schema, kept with it.
impl ResponseSchema {
    /// The schema as `target` accepts it, lowered on first use and kept; what the target cannot
    /// express is a [`LowerReport`] naming each node.
    pub fn lowered(&self, target: SchemaTarget) -> Result<&Value, LowerReport> {
        lowering(self, target).map(|l| &l.schema)
    }

    /// What lowering for `target` moved into descriptions: the rules the provider does not hold
    /// the model to (they are checked locally all the same).
    pub fn moved(&self, target: SchemaTarget) -> Result<&[Moved], LowerReport> {
        lowering(self, target).map(|l| l.moved.as_slice())
    }

    /// Keywords lowering for `target` sent as written that the target's engine is known to
    /// ignore, or may ignore (they are checked locally all the same).
    pub fn kept(&self, target: SchemaTarget) -> Result<&[Kept], LowerReport> {
        lowering(self, target).map(|l| l.kept.as_slice())
    }

    /// The extension annotations (`x-` keywords) lowering for `target` left out of what is sent:
    /// they say nothing of the value.
    pub fn dropped(&self, target: SchemaTarget) -> Result<&[Dropped], LowerReport> {
        lowering(self, target).map(|l| l.dropped.as_slice())
    }

    /// The objects lowering for `target` sent closed though the schema as written leaves them
    /// open (Anthropic closes every object): the provider holds the model to their declared
    /// properties only.
    pub fn closed(&self, target: SchemaTarget) -> Result<&[Pointer], LowerReport> {
        lowering(self, target).map(|l| l.closed.as_slice())
    }

    /// How lowering for `target` changed the shape of what is sent (OpenAI strict: maps as lists
    /// of entries, a root that is not an object wrapped): answers are read back into this
    /// schema's shape before anything else sees them.
    pub fn reshape(&self, target: SchemaTarget) -> Result<&Reshape, LowerReport> {
        lowering(self, target).map(|l| &l.reshape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::capabilities::capabilities;
    use crate::provider::dialect::GrammarBudget;
    use crate::provider::wire::{fragment_body, Constraint, LlamaCppRequest};
    use serde_json::json;

    /// Requests naming a thousand token limits, each fitting its grammar's budget to its own,
    /// between requests naming the usual one: each gets its grammar, the schema keeps
    /// [`MAX_FRAGMENTS`] at most, and the usual one is built again once per that many others
    /// at most (kept as it is used, not shut out by the others).
    #[test]
    fn fragments_kept_with_a_schema_are_bounded() {
        let schema = ResponseSchema::new(
            "t",
            json!({"type": "object", "properties": {"s": {"type": "string"}},
                "required": ["s"], "additionalProperties": false}),
        )
        .unwrap();
        let (kind, mode) = (ProviderKind::LlamaCpp, StructuredOutputMode::SchemaEnforced);
        let caps = capabilities(kind, "m");
        let ask = |max_tokens| {
            let constraint = Constraint {
                llama_cpp: LlamaCppRequest::Grammar,
                budget: GrammarBudget::for_max_tokens(max_tokens),
            };
            let fragment = fragment_body(kind, mode, &schema, &caps, &constraint).unwrap();
            assert!(fragment.value["grammar"]
                .as_str()
                .is_some_and(|g| g.contains("root")));
            fragment
        };
        let kept = || {
            let fragments = &cache(&schema, SchemaTarget::LlamaCpp).unwrap().fragments;
            fragments.lock().unwrap().len()
        };
        // Other limits first (filling what is kept), then each between two of the usual one.
        for max_tokens in 2000..2100 {
            ask(max_tokens);
            assert!(kept() <= MAX_FRAGMENTS);
        }
        let mut usual: Vec<Arc<Fragment>> = Vec::new();
        for max_tokens in 3000..4000 {
            ask(max_tokens);
            assert!(kept() <= MAX_FRAGMENTS);
            let fragment = ask(1024);
            if !usual.last().is_some_and(|u| Arc::ptr_eq(u, &fragment)) {
                usual.push(fragment);
            }
        }
        // Built once, then again once per MAX_FRAGMENTS - 1 others at most (17 times here;
        // 1,000 if the others shut it out).
        assert!(
            usual.len() <= 1000_usize.div_ceil(MAX_FRAGMENTS - 1) + 1,
            "{}",
            usual.len()
        );
    }

    #[test]
    fn lowering_is_kept_per_target() {
        let schema = ResponseSchema::new(
            "t",
            json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 0}},
                "required": ["n"], "additionalProperties": false}),
        )
        .unwrap();
        let first = schema.lowered(SchemaTarget::Anthropic).unwrap() as *const Value;
        let again = schema.clone();
        let second = again.lowered(SchemaTarget::Anthropic).unwrap() as *const Value;
        assert_eq!(first, second, "a clone shares what was computed");
        assert_eq!(
            schema.lowered(SchemaTarget::Anthropic).unwrap()["properties"]["n"],
            json!({"type": "number", "description": "{minimum: 0}"})
        );
        let described = schema.clone().with_description("now described");
        let third = described.lowered(SchemaTarget::Anthropic).unwrap() as *const Value;
        assert_ne!(first, third, "a setter drops what was kept");
    }
}
