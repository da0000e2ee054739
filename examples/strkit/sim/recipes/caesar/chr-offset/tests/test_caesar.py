def test_shift(same):
    same("caesar", "-s", "3", "Hello xyz")
    same("caesar", "--shift", "-1", "abc")


def test_needs_shift(same):
    same("caesar", "abc")
