def test_yes(same):
    same("palindrome", "Never odd or even")


def test_no_lines(same):
    same("palindrome", stdin="abba\nabc\n")
