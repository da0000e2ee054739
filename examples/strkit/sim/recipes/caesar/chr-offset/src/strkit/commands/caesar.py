from ..cli import UsageError, number, parse_options, text_command


def shift(s, by):
    return "".join(chr(ord(c) + by) if c.isalpha() else c for c in s)


def run(args):
    opts, text = parse_options(args, {"--shift": ("-s", True)})
    if "--shift" not in opts:
        raise UsageError("needs --shift N")
    by = number(opts["--shift"])
    return text_command(text, lambda s: (shift(s, by), 0))
