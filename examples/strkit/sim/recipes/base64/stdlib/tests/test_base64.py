def test_encode(same):
    same("base64", stdin="strkit!")


def test_decode(same):
    same("base64", "-d", stdin="c3Rya2l0IQ==\n")


def test_invalid(same):
    same("base64", "-d", stdin="***")
