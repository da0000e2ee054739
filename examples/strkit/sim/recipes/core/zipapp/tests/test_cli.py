def test_help(same):
    same("--help")


def test_errors(same):
    same()
    same("frobnicate")
