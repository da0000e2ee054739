from ..cli import parse_options, read_stdin, stdin_command, write

SPACE = " \t\n\r\v\f"


def run(args):
    _, rest = parse_options(args, {})
    stdin_command(rest)
    data = read_stdin()
    words = len([w for w in data.translate({ord(c): " " for c in SPACE}).split(" ") if w])
    write(f"{data.count(chr(10))} {words} {len(data)}\n")
    return 0
