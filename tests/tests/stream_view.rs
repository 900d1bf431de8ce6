//! [`StreamView`] keeps the value so far by a stream's changes, finding each from where the last
//! one was made: it must build exactly what [`Change::apply`] builds, for any changes in any
//! order (a stream's own, and ones that do not fit), after every change.

use proptest::prelude::*;
use serde_json::{json, Value};
use structured_runtime::read::Change;
use structured_runtime::{Pointer, StreamView};

/// Segments that meet often (so most changes land on something), with the escapes and the
/// index spellings a pointer may hold.
fn segment() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "a~1b", "~0", "0", "1", "2", "01", "+1", ""])
        .prop_map(str::to_owned)
}

fn pointer() -> impl Strategy<Value = Pointer> {
    prop::collection::vec(segment(), 0..4).prop_map(|segments| {
        let text: String = segments.iter().map(|s| format!("/{s}")).collect();
        Pointer::parse(&text).expect("a pointer")
    })
}

fn value() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!(null),
        json!(1),
        json!(""),
        json!("x"),
        json!({}),
        json!([]),
        json!({"a": 1}),
        json!({"a/b": {"~": []}}),
        json!([1, {"b": "y"}]),
    ])
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (pointer(), value()).prop_map(|(at, value)| Change::Set { at, value }),
        (pointer(), "[a-z]{0,3}").prop_map(|(at, text)| Change::Append { at, text }),
    ]
}

/// Changes a stream makes: each place the last one, beside it, or inside it (where the view
/// takes its short cut), with a jump elsewhere now and then.
fn stream_like() -> impl Strategy<Value = Vec<Change>> {
    let step = prop_oneof![
        4 => Just(0u8), // the same place
        3 => Just(1),   // inside it
        3 => Just(2),   // beside it
        1 => Just(3),   // up one, beside its container
        1 => Just(4),   // anywhere
    ];
    prop::collection::vec((step, segment(), value(), "[a-z]{0,3}", pointer()), 0..40).prop_map(
        |steps| {
            let mut at = Pointer::root();
            let mut out = Vec::new();
            for (step, segment, value, text, anywhere) in steps {
                at = match step {
                    0 => at,
                    1 => at.key(&unescaped(&segment)),
                    2 => at.split_last().map_or(Pointer::root(), |(parent, _)| {
                        parent.key(&unescaped(&segment))
                    }),
                    3 => {
                        let parent = at.split_last().map(|(parent, _)| parent);
                        let up = parent.as_ref().and_then(|p| p.split_last());
                        up.map_or(Pointer::root(), |(up, _)| up.key(&unescaped(&segment)))
                    }
                    _ => anywhere,
                };
                out.push(if text.len() % 2 == 0 {
                    Change::Set {
                        at: at.clone(),
                        value,
                    }
                } else {
                    Change::Append {
                        at: at.clone(),
                        text,
                    }
                });
            }
            out
        },
    )
}

/// The name a segment stands for (the strategies write segments as pointers escape them).
fn unescaped(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn agree(changes: &[Change]) -> Result<(), TestCaseError> {
    let mut view = StreamView::new();
    let mut applied = Value::Null;
    for (i, change) in changes.iter().enumerate() {
        view.apply(change);
        change.apply(&mut applied);
        prop_assert_eq!(
            view.value(),
            &applied,
            "after change {} of {:?}",
            i,
            changes
        );
    }
    prop_assert_eq!(view.into_value(), applied);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_view_builds_what_the_changes_applied_build(changes in prop::collection::vec(change(), 0..30)) {
        agree(&changes)?;
    }

    #[test]
    fn a_view_builds_what_a_streams_changes_build(changes in stream_like()) {
        agree(&changes)?;
    }
}

#[test]
fn a_view_follows_a_member_named_again_where_it_stands() {
    // `a` set again keeps its place before `b`: free text appended to `a` then is not the
    // newest member's.
    let set = |at: &str, value: Value| Change::Set {
        at: Pointer::parse(at).unwrap(),
        value,
    };
    let append = |at: &str, text: &str| Change::Append {
        at: Pointer::parse(at).unwrap(),
        text: text.into(),
    };
    let changes = [
        set("", json!({})),
        set("/a", json!("")),
        set("/b", json!("")),
        set("/a", json!("x")),
        append("/a", "y"),
        append("/b", "z"),
        set("/c", json!([])),
        set("/c/0", json!("")),
        set("/c/0", json!("w")),
        append("/c/0", "v"),
        set("/c/1", json!(1)),
        append("/c/0", "u"),
    ];
    let mut view = StreamView::new();
    for change in &changes {
        view.apply(change);
    }
    assert_eq!(view.value(), &json!({"a": "xy", "b": "z", "c": ["wvu", 1]}));
}

/// A schema whose `note` is free text (shown as it arrives).
fn note_schema() -> structured_runtime::ResponseSchema {
    structured_runtime::ResponseSchema::new(
        "note",
        json!({
            "type": "object",
            "properties": {"note": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["note", "n"],
            "additionalProperties": false
        }),
    )
    .expect("schema")
}

/// `text` fed to a reader of [`note_schema`] in chunks of `sizes` bytes (in turn, cut anywhere):
/// the note a view shows after each chunk, and the view's value at the end.
fn notes_shown(text: &str, sizes: &[usize]) -> (Vec<String>, Value) {
    let schema = note_schema();
    let mut reader = structured_runtime::StreamReader::changes_only(&schema);
    let mut view = StreamView::new();
    let (mut shown, mut at, mut size) = (Vec::new(), 0, sizes.iter().cycle());
    while at < text.len() {
        let end = (at + size.next().copied().unwrap_or(1)).min(text.len());
        for change in reader.feed(&text.as_bytes()[at..end]).changes {
            view.apply(change);
        }
        at = end;
        let note = view.value().get("note").and_then(Value::as_str);
        shown.push(note.unwrap_or_default().to_owned());
    }
    (shown, view.into_value())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Free text fed in token-sized chunks (plain text is taken as it comes, anything else is
    /// decoded): after every chunk the text shown is a beginning of the text written, and at
    /// the end it is all of it, as the answer read whole says.
    #[test]
    fn free_text_in_chunks_shows_what_was_written(
        note in prop::collection::vec(
            prop::sample::select(vec![
                "plain ", "a", "\"", "\\", "\n", "\t", "\u{1}", "é", "😀", "}", ",", "\\u0041",
            ]),
            0..40,
        ).prop_map(|parts| parts.concat()),
        sizes in prop::collection::vec(1usize..10, 1..8),
    ) {
        let text = json!({"note": note, "n": 1}).to_string();
        let (shown, last) = notes_shown(&text, &sizes);
        for shown in shown {
            prop_assert!(note.starts_with(&shown), "{:?} shown of {:?}", shown, note);
        }
        prop_assert_eq!(last, json!({"note": note, "n": 1}));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A raw control character inside a string is not JSON text: however the answer is cut, it
    /// is never shown.
    #[test]
    fn a_raw_control_character_is_never_shown(
        before in "[a-z ]{0,12}",
        after in "[a-z ]{0,12}",
        control in 0u8..0x20,
        sizes in prop::collection::vec(1usize..10, 1..8),
    ) {
        let text = format!(r#"{{"note": "{before}{}{after}", "n": 1}}"#, char::from(control));
        for shown in notes_shown(&text, &sizes).0 {
            prop_assert!(!shown.contains(char::from(control)), "{:?} shown of {:?}", shown, text);
        }
    }
}
