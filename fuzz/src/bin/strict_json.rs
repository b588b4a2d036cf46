fn main() {
    afl::fuzz!(|data: &[u8]| jobboard_fuzz::strict_json(data));
}
