def test_freq(same):
    same("freq", stdin="b a b c a b")
    same("freq", "-n", "1", stdin="x y y")
