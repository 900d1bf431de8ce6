use structured_runtime::StructuredOutput;

#[derive(StructuredOutput)]
union Bits {
    whole: u32,
    half: u16,
}

fn main() {}
