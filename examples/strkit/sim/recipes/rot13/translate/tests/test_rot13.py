def test_rot13(same):
    same("rot13", "Why did the chicken cross the road?")
