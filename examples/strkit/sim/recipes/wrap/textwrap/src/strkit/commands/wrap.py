import re
import textwrap

from ..cli import UsageError, number, parse_options, read_stdin, stdin_command, write


def run(args):
    opts, rest = parse_options(args, {"--width": ("-w", True)})
    stdin_command(rest)
    width = number(opts.get("--width", "40"))
    if width < 1:
        raise UsageError(f"width must be at least 1, got '{opts['--width']}'")
    paragraphs = [p for p in re.split(r"\n[ \t\r\v\f]*\n", read_stdin()) if p.strip()]
    write("\n".join(textwrap.fill(p, width) + "\n" for p in paragraphs))
    return 0
