def test_pad(same):
    same("pad", "-w", "8", "abc")


def test_center(same):
    same("pad", "-w", "9", "-a", "center", "-c", ".", "abcd")


def test_bad_align(same):
    same("pad", "-w", "3", "--align=up", "x")
