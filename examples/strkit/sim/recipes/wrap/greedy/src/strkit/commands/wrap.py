from ..cli import UsageError, number, parse_options, read_stdin, stdin_command, write

SPACE = " \t\r\v\f"


def paragraphs(data):
    current = []
    for line in data.split("\n"):
        if line.strip(SPACE + "\n") == "":
            if current:
                yield current
            current = []
        else:
            current.extend(line.translate({ord(c): " " for c in SPACE}).split())
    if current:
        yield current


def fill(words, width):
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = ""
        line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(lines) + "\n"


def run(args):
    opts, rest = parse_options(args, {"--width": ("-w", True)})
    stdin_command(rest)
    width = number(opts.get("--width", "40"))
    if width < 1:
        raise UsageError(f"width must be at least 1, got '{opts['--width']}'")
    write("\n".join(fill(p, width) for p in paragraphs(read_stdin())))
    return 0
