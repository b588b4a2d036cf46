fn main() {
    afl::fuzz!(|data: &[u8]| jobboard_fuzz::form(data));
}
