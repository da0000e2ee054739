def test_count(same):
    same("count", stdin="a b\nc d e\n")


def test_no_final_newline(same):
    same("count", stdin="one\ntwo")
