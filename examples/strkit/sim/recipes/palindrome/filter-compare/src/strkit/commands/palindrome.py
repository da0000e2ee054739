from ..cli import parse_options, text_command


def check(s):
    kept = [c for c in s.lower() if c.isascii() and c.isalnum()]
    return ("yes", 0) if kept == kept[::-1] else ("no", 1)


def run(args):
    _, text = parse_options(args, {})
    return text_command(text, check)
