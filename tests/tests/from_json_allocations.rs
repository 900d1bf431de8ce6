//! `from_json` allocates exactly what `serde_json::from_str` allocates reading the same type from
//! the same text: the strict reading (each key noted, each number read as written, zeros looked
//! at again in the text, the type's rules checked) costs no allocation of its own on an answer
//! it accepts, for a type it reads directly (one whose reading can vouch for the value as
//! written; a set or a tagged enum is read as a `Value` and judged by the validator of record). A differential property over generated answers: clean and pretty-printed, strings
//! with escapes and characters beyond ASCII, floats zero, negative zero and written as integers,
//! an optional member `null` or a number (the strict schema requires it). Counted per thread by a counting allocator, never timed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};
use structured_runtime::StructuredOutput;

/// Counts the allocations (and reallocations) made by the thread that makes them: the tests of
/// this file run on threads of their own, and each counts only its own reading.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // (`try_with`: a thread being torn down has no counter left, and is not measured.)
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The allocations `work` makes on this thread, and what it returns.
fn allocations<R>(work: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = work();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

/// A decision with what models answer with: a word list, a bounded float, free text, a list of
/// structs holding lists, an optional integer and a flag.
#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Report {
    #[enum_values("low", "moderate", "high")]
    level: String,
    #[range(0.0, 1.0)]
    score: f64,
    note: String,
    items: Vec<Item>,
    count: Option<u32>,
    urgent: bool,
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Item {
    name: String,
    #[range(-1000.0, 1000.0)]
    weight: f64,
    tags: Vec<String>,
}

/// Text as answers hold it: plain words, and quotes, backslashes, line breaks, tabs, accents and
/// an emoji, each written with its escape where JSON needs one.
fn text() -> impl Strategy<Value = String> {
    "[a-z \"\\\\\n\té😀]{0,24}"
}

/// A float in `range` as models write them: zero, negative zero, a whole number, or any.
fn float(low: f64, high: f64) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(0.0)),
        Just(json!(-0.0)),
        Just(json!(0)),
        (low as i64..=high as i64).prop_map(|n| json!(n)),
        (low..=high).prop_map(|f| json!(f)),
    ]
}

fn item() -> impl Strategy<Value = Value> {
    (
        text(),
        float(-1000.0, 1000.0),
        prop::collection::vec(text(), 0..4),
    )
        .prop_map(|(name, weight, tags)| json!({"name": name, "weight": weight, "tags": tags}))
}

/// An answer `Report` accepts, as a JSON value.
fn report() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["low", "moderate", "high"]),
        float(0.0, 1.0),
        text(),
        prop::collection::vec(item(), 0..6),
        prop::option::of(any::<u32>()),
        any::<bool>(),
    )
        .prop_map(|(level, score, note, items, count, urgent)| {
            json!({
                "level": level, "score": score, "note": note, "items": items, "count": count,
                "urgent": urgent,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// On every answer it accepts, `from_json` allocates as often as `serde_json::from_str`
    /// reading the same type from the same text, and returns the same value.
    #[test]
    fn from_json_allocates_what_serde_json_allocates(answer in report(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&answer).unwrap()
        } else {
            answer.to_string()
        };
        // The schema is built once per process, on first use: not part of a reading.
        let _ = Report::schema();
        let (theirs, serde_read) = allocations(|| serde_json::from_str::<Report>(&text));
        let (ours, read) = allocations(|| Report::from_json(&text));
        let read = read.map_err(|e| TestCaseError::fail(format!("{e} on {text}")))?;
        prop_assert_eq!(Some(&read), serde_read.as_ref().ok(), "{}", text);
        prop_assert_eq!(ours, theirs, "from_json allocated {} times, serde_json {}, on {}", ours, theirs, text);
    }
}
