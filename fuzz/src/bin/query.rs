fn main() {
    afl::fuzz!(|data: &[u8]| jobboard_fuzz::query(data));
}
