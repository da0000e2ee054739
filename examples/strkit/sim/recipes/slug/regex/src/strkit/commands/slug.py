import re

from ..cli import parse_options, text_command


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def run(args):
    _, text = parse_options(args, {})
    return text_command(text, lambda s: (slug(s), 0))
