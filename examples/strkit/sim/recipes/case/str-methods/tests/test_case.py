def test_upper_lower(same):
    same("upper", "hello", "world")
    same("lower", stdin="ONE\nTwo\n")


def test_title(same):
    same("title", "the QUICK brown fox")
