def test_reverse(same):
    same("reverse", "hello", "there")


def test_reverse_lines(same):
    same("reverse", stdin="ab\ncd")
