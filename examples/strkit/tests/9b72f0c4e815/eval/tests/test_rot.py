def test_rot13(strkit):
    assert strkit("rot13", "Hello, World!").stdout == "Uryyb, Jbeyq!\n"


def test_rot13_twice_is_identity(strkit):
    once = strkit("rot13", "Round Trip 123").stdout.strip()
    assert strkit("rot13", once).stdout == "Round Trip 123\n"


def test_caesar_shift(strkit):
    assert strkit("caesar", "-s", "3", "xyz ABC").stdout == "abc DEF\n"


def test_caesar_negative_shift(strkit):
    assert strkit("caesar", "--shift", "-3", "abc").stdout == "xyz\n"


def test_caesar_large_shift(strkit):
    assert strkit("caesar", "--shift=29", "abc").stdout == "def\n"


def test_caesar_needs_shift(strkit):
    r = strkit("caesar", "abc")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: caesar: needs --shift N"


def test_caesar_bad_number(strkit):
    r = strkit("caesar", "-s", "three", "abc")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: caesar: not a number: 'three'"
