def test_small(same):
    same("roman", "4")


def test_year(same):
    same("roman", "2024")


def test_decode(same):
    same("roman", "-d", "xlii")


def test_range(same):
    same("roman", "5000")
