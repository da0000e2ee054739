def test_count(same):
    same("count", stdin="a b\nc d e\n")
    same("count", stdin="one\ntwo")
