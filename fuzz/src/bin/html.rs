fn main() {
    afl::fuzz!(|data: &[u8]| jobboard_fuzz::html(data));
}
