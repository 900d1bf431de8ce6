//! The repairer and the extractor on arbitrary text: no panic, and what is claimed holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structured_fuzz::{is_json, serde_reads_back};
use structured_runtime::read::repair::{
    repair, repair_common, repair_json, repair_text, repair_text_json,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = structured_runtime::read::extract::candidates(text);
    // The text repairer (what `structured repair` prints) writes exactly what the value repairer
    // reads, with the same repairs, or refuses alike.
    for (value, json) in [
        (repair(text), repair_json(text)),
        (repair_text(text), repair_text_json(text)),
    ] {
        match (value, json) {
            (Ok(v), Ok(j)) => {
                assert_eq!(j.value, v.value.to_string(), "{text:?}");
                assert_eq!(j.repairs, v.repairs, "{text:?}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{text:?}: {a:?} / {b:?}"),
        }
    }
    // The one-pass mend reads a text only as the tolerant parser reads it.
    if let Some(mended) = repair_common(text) {
        let full = repair(text).expect("a text the one-pass mend reads is repaired");
        assert_eq!(mended.repairs, full.repairs, "{text:?}");
        assert!(!full.truncated);
        assert!(is_json(&mended.value), "{text:?}");
        if serde_reads_back(&full.value) {
            let read = serde_json::from_str::<serde_json::Value>(&mended.value);
            assert_eq!(read.ok().as_ref(), Some(&full.value), "{text:?}");
        }
    }
    for result in [repair(text), repair_text(text)] {
        if let Ok(fixed) = result {
            // The value is real JSON: what it prints parses (serde_json's own float parsing is
            // not exact, so the numbers are not compared).
            let printed = fixed.value.to_string();
            assert!(is_json(&printed), "{printed}");
            // A truncation is always recorded as one.
            assert_eq!(
                fixed.truncated,
                fixed.repairs.iter().any(|r| r.kind.is_truncation())
            );
            assert!(fixed.repairs.iter().all(|r| r.at <= text.len()));
            // No repair at all: the text as written is the value.
            if fixed.is_clean() && serde_reads_back(&fixed.value) {
                let written = serde_json::from_str::<serde_json::Value>(text);
                assert_eq!(written.ok().as_ref(), Some(&fixed.value), "{text:?}");
            }
        }
    }
});
