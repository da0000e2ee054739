def test_encode(strkit):
    assert strkit("base64", stdin="hello world").stdout == "aGVsbG8gd29ybGQ=\n"


def test_encode_padding(strkit):
    assert [strkit("base64", stdin=s).stdout for s in ["a", "ab", "abc"]] == ["YQ==\n", "YWI=\n", "YWJj\n"]


def test_encode_empty(strkit):
    assert strkit("base64", stdin="").stdout == "\n"


def test_decode(strkit):
    r = strkit("base64", "-d", stdin="aGVsbG8gd29y\nbGQ=\n")
    assert (r.returncode, r.stdout) == (0, "hello world")


def test_decode_without_padding(strkit):
    assert strkit("base64", "--decode", stdin="aGk").stdout == "hi"


def test_decode_invalid(strkit):
    r = strkit("base64", "-d", stdin="a$b=")
    assert r.returncode == 1
    assert r.stderr.strip() == "strkit: base64: invalid input"


def test_takes_no_arguments(strkit):
    r = strkit("base64", "hello")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: base64: reads standard input; unexpected argument 'hello'"
