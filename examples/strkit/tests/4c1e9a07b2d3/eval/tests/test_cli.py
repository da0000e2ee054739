COMMANDS = ["upper", "lower", "title", "reverse", "rot13", "caesar", "slug", "palindrome",
            "pad", "count", "wrap", "freq", "base64", "roman"]


def test_help_names_every_command(strkit):
    r = strkit("--help")
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == "usage: strkit COMMAND [OPTIONS] [TEXT...]"
    for name in COMMANDS:
        assert name in r.stdout


def test_short_help(strkit):
    assert strkit("-h").stdout == strkit("--help").stdout


def test_version(strkit):
    r = strkit("--version")
    assert (r.returncode, r.stdout) == (0, "strkit 1.4.0\n")


def test_no_command_is_a_usage_error(strkit):
    r = strkit()
    assert r.returncode == 2
    assert r.stdout == ""
    assert "usage: strkit" in r.stderr
    assert "try 'strkit --help'" in r.stderr


def test_unknown_command(strkit):
    r = strkit("shout", "hi")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: unknown command 'shout'"
