def test_upper(same):
    same("upper", "hello", "world")


def test_lower_lines(same):
    same("lower", stdin="ONE\nTwo\n")


def test_title(same):
    same("title", "the QUICK brown fox")


def test_unknown_option(same):
    same("upper", "-q", "x")
