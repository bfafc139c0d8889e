//! The crate's own checks of `add`, inside the crate (unit tests), as many Rust projects keep theirs.

#[cfg(test)]
mod tests {
    use crate::add;

    #[test]
    fn add_zeros() {
        assert_eq!(add(0, 0), 0);
    }
}
