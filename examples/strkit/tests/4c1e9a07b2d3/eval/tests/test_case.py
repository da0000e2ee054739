def test_upper_arguments_joined(strkit):
    r = strkit("upper", "hello", "wide world")
    assert (r.returncode, r.stdout) == (0, "HELLO WIDE WORLD\n")


def test_lower(strkit):
    assert strkit("lower", "MiXeD 42 CaSe").stdout == "mixed 42 case\n"


def test_upper_reads_each_line(strkit):
    assert strkit("upper", stdin="one\ntwo\nthree").stdout == "ONE\nTWO\nTHREE\n"


def test_empty_input_prints_nothing(strkit):
    r = strkit("lower", stdin="")
    assert (r.returncode, r.stdout) == (0, "")


def test_title(strkit):
    assert strkit("title", "the QUICK brown fox").stdout == "The Quick Brown Fox\n"


def test_title_words_start_only_after_blanks(strkit):
    assert strkit("title", "don't stop hello-world").stdout == "Don't Stop Hello-world\n"


def test_unknown_option(strkit):
    r = strkit("upper", "-x", "text")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: upper: unknown option '-x'"


def test_double_dash_ends_options(strkit):
    assert strkit("upper", "--", "-x").stdout == "-X\n"
