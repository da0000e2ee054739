def test_slug(same):
    same("slug", "What's New in 2.0?")
