use arith::add;

#[test]
fn add_zeros() {
    assert_eq!(add(0, 0), 0);
}
