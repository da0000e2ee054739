from ..cli import UsageError, number, parse_options, text_command


def shift(s, by):
    out = []
    for c in s:
        if "a" <= c <= "z":
            c = chr(ord("a") + (ord(c) - ord("a") + by) % 26)
        elif "A" <= c <= "Z":
            c = chr(ord("A") + (ord(c) - ord("A") + by) % 26)
        out.append(c)
    return "".join(out)


def run(args):
    opts, text = parse_options(args, {"--shift": ("-s", True)})
    if "--shift" not in opts:
        raise UsageError("needs --shift N")
    by = number(opts["--shift"])
    return text_command(text, lambda s: (shift(s, by), 0))
