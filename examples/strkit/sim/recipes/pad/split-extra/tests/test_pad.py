def test_pad(same):
    same("pad", "-w", "8", "abc")
    same("pad", "-w", "9", "-a", "center", "-c", ".", "abcd")
    same("pad", "-w", "3", "--align=up", "x")
