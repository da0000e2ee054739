def test_reverse(strkit):
    assert strkit("reverse", "stressed", "desserts").stdout == "stressed desserts\n"


def test_reverse_each_line(strkit):
    assert strkit("reverse", stdin="abc\nxy\n").stdout == "cba\nyx\n"


def test_slug(strkit):
    assert strkit("slug", "  Hello, World!  2024 ").stdout == "hello-world-2024\n"


def test_slug_of_symbols_is_empty(strkit):
    assert strkit("slug", "!!!").stdout == "\n"


def test_palindrome_yes(strkit):
    r = strkit("palindrome", "A man, a plan, a canal: Panama")
    assert (r.returncode, r.stdout) == (0, "yes\n")


def test_palindrome_no(strkit):
    r = strkit("palindrome", "strkit")
    assert (r.returncode, r.stdout) == (1, "no\n")


def test_palindrome_lines(strkit):
    r = strkit("palindrome", stdin="racecar\nhello\n")
    assert (r.returncode, r.stdout) == (1, "yes\nno\n")
