import string

from ..cli import parse_options, text_command

LOWER, UPPER = string.ascii_lowercase, string.ascii_uppercase
TABLE = str.maketrans(LOWER + UPPER, LOWER[13:] + LOWER[:13] + UPPER[13:] + UPPER[:13])


def run(args):
    _, text = parse_options(args, {})
    return text_command(text, lambda s: (s.translate(TABLE), 0))
