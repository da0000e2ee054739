def test_palindrome(same):
    same("palindrome", "Never odd or even")
    same("palindrome", stdin="abba\nabc\n")
