def test_round_trip(same):
    same("base64", stdin="strkit!")
    same("base64", "-d", stdin="c3Rya2l0IQ==\n")


def test_invalid(same):
    same("base64", "-d", stdin="***")
