TEXT = "The cat and the dog. THE END, and a cat!"


def test_freq_order(strkit):
    assert strkit("freq", stdin=TEXT).stdout == "3 the\n2 and\n2 cat\n1 a\n1 dog\n1 end\n"


def test_freq_top(strkit):
    assert strkit("freq", "-n", "2", stdin=TEXT).stdout == "3 the\n2 and\n"


def test_freq_words_are_letters_only(strkit):
    assert strkit("freq", stdin="it's 4 o'clock").stdout == "1 clock\n1 it\n1 o\n1 s\n"


def test_freq_bad_top(strkit):
    r = strkit("freq", "--top", "0", stdin=TEXT)
    assert r.returncode == 2
