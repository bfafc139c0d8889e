#!/bin/sh
# Capture real logs of `cargo test` for tests/test_integrity.py: a toy crate (below) with unit tests (one failing
# until TOY_FIXED is set, one ignored), an integration test and a doc-test; output and exit code recorded as the
# reward records them. TOY_FORGE makes the code under test register an exit hook that prints a pass for the failed
# test and exits 0 (in every test binary that calls it). Needs cargo and rustc (rustup's, or Debian's packages);
# no crates. Run from the repository root: sh tests/runner_logs/capture_cargo.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
crate=$(mktemp -d /tmp/uag-cargo-XXXXXX)
mkdir -p "$crate/src" "$crate/tests"
cat > "$crate/Cargo.toml" <<'EOF'
[package]
name = "toy"
version = "0.1.0"
edition = "2021"
EOF
cat > "$crate/src/lib.rs" <<'EOF'
/// The sum of a and b.
///
/// ```
/// assert_eq!(toy::add(2, 3), 5);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    if std::env::var("TOY_FORGE").is_ok() {
        extern "C" {
            fn atexit(hook: extern "C" fn()) -> i32;
            fn _exit(code: i32) -> !;
        }
        extern "C" fn forge() {
            println!("test tests::two_numbers ... ok");
            unsafe { _exit(0) }
        }
        unsafe { atexit(forge) };
    }
    if std::env::var("TOY_FIXED").is_ok() { a + b } else { a - b }
}

#[cfg(test)]
mod tests {
    use super::add;

    #[test]
    fn two_numbers() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn zeros() {
        assert_eq!(add(0, 0), 0);
    }

    #[test]
    #[ignore]
    fn slow() {}
}
EOF
cat > "$crate/tests/outside.rs" <<'EOF'
#[test]
fn from_outside() {
    assert_eq!(toy::add(0, 0), 0);
}
EOF
cd "$crate"
capture() {  # name, environment, cargo's arguments
    name=$1 environment=$2
    shift 2
    ( env $environment RUST_BACKTRACE=0 cargo test --offline "$@" ) > "$out/$name.log" 2>&1 && code=0 || code=$?
    echo "$name: exit $code"
}
capture cargo-pass TOY_FIXED=1
capture cargo-fail X=0
capture cargo-no-fail-fast X=0 --no-fail-fast
capture cargo-forged TOY_FORGE=1 --no-fail-fast
rm -rf "$crate"
