def test_help(same):
    same("--help")


def test_version(same):
    same("--version")


def test_no_command(same):
    same()


def test_unknown_command(same):
    same("frobnicate")
