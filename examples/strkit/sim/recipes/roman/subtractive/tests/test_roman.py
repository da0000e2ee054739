def test_roman(same):
    same("roman", "4")
    same("roman", "2024")
    same("roman", "5000")


def test_decode(same):
    same("roman", "-d", "xlii")
