import pytest


@pytest.mark.parametrize("n,numeral", [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"),
                                       (90, "XC"), (400, "CD"), (1994, "MCMXCIV"), (3999, "MMMCMXCIX")])
def test_to_roman(strkit, n, numeral):
    assert strkit("roman", str(n)).stdout == numeral + "\n"


def test_out_of_range(strkit):
    r = strkit("roman", "0")
    assert r.returncode == 1
    assert r.stderr.strip() == "strkit: roman: out of range (1-3999)"


def test_four_thousand(strkit):
    # Written before the manual settled on 1-3999: the reference refuses 4000.
    assert strkit("roman", "4000").stdout == "MMMM\n"


def test_decode(strkit):
    assert strkit("roman", "-d", "MCMXCIV").stdout == "1994\n"


def test_decode_lower_case(strkit):
    assert strkit("roman", "--decode", "xlii").stdout == "42\n"


def test_decode_non_canonical(strkit):
    r = strkit("roman", "-d", "IIII")
    assert r.returncode == 1
    assert r.stderr.strip() == "strkit: roman: not a roman numeral: 'IIII'"


def test_needs_a_number(strkit):
    r = strkit("roman")
    assert r.returncode == 2
    assert r.stderr.strip() == "strkit: roman: needs a number"
