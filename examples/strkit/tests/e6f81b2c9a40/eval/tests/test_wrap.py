def test_wrap_width(strkit):
    text = "the quick brown fox jumps over the lazy dog"
    assert strkit("wrap", "-w", "10", stdin=text).stdout == "the quick\nbrown fox\njumps over\nthe lazy\ndog\n"


def test_wrap_default_width(strkit):
    words = " ".join(["word"] * 12)
    out = strkit("wrap", stdin=words).stdout.splitlines()
    assert out == [" ".join(["word"] * 8), " ".join(["word"] * 4)]


def test_wrap_long_word_stands_alone(strkit):
    assert strkit("wrap", "--width", "5", stdin="a extraordinary b").stdout == "a\nextraordinary\nb\n"


def test_wrap_paragraphs(strkit):
    text = "one two\nthree\n\n   \nfour five six\n"
    assert strkit("wrap", "-w", "9", stdin=text).stdout == "one two\nthree\n\nfour five\nsix\n"


def test_wrap_empty(strkit):
    assert strkit("wrap", stdin="").stdout == ""
