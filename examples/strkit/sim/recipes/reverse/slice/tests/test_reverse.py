def test_reverse(same):
    same("reverse", "hello", "there")
    same("reverse", stdin="ab\ncd")
