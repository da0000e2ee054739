def test_count(strkit):
    assert strkit("count", stdin="one two\nthree\n").stdout == "2 3 14\n"


def test_count_without_final_newline(strkit):
    assert strkit("count", stdin="a  b\t c").stdout == "0 3 7\n"


def test_count_empty(strkit):
    assert strkit("count", stdin="").stdout == "0 0 0\n"


def test_count_takes_no_arguments(strkit):
    r = strkit("count", "file.txt")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: count: reads standard input; unexpected argument 'file.txt'"
