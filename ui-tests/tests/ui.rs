//! Compile-fail cases: every misuse of the derive is an error at the offending token with a
//! message that says how to fix it. Bless with `TRYBUILD=overwrite` and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
