def test_pad_left_default(strkit):
    assert strkit("pad", "-w", "6", "ab").stdout == "ab    \n"


def test_pad_right(strkit):
    assert strkit("pad", "-w", "6", "-a", "right", "ab").stdout == "    ab\n"


def test_pad_center_with_char(strkit):
    assert strkit("pad", "--width=7", "--align", "center", "-c", "*", "ab").stdout == "**ab***\n"


def test_pad_long_text_unchanged(strkit):
    assert strkit("pad", "-w", "2", "abcdef").stdout == "abcdef\n"


def test_pad_bad_alignment(strkit):
    r = strkit("pad", "-w", "4", "-a", "middle", "x")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: pad: bad alignment 'middle' (left, right or center)"
