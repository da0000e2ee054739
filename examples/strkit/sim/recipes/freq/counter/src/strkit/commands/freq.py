import re
from collections import Counter

from ..cli import UsageError, number, parse_options, read_stdin, stdin_command, write


def run(args):
    opts, rest = parse_options(args, {"--top": ("-n", True)})
    stdin_command(rest)
    top = None
    if "--top" in opts:
        top = number(opts["--top"])
        if top < 1:
            raise UsageError(f"--top must be at least 1, got '{opts['--top']}'")
    counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", read_stdin()))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    write("".join(f"{n} {w}\n" for w, n in ranked[:top]))
    return 0
