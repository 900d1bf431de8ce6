fn main() {
    let text = std::env::args().nth(1).unwrap();
    let r = structured_runtime::repair::repair_text(&text);
    println!("{r:?}");
}
