"""What every command shares: errors, options, numbers, and the text-command loop."""
import re
import sys


class UsageError(Exception):
    """A usage error: printed as 'strkit: CMD: message', exit status 2."""


def fail(command, message, status=1):
    sys.stderr.write(f"strkit: {command}: {message}\n")
    return status


def read_stdin():
    # latin-1 keeps every byte as one character, like the reference.
    return sys.stdin.buffer.read().decode("latin-1")


def write(text):
    sys.stdout.buffer.write(text.encode("latin-1"))


def parse_options(args, spec):
    """spec: {long: (short, takes_value)}. Returns ({long: value or True}, rest)."""
    found = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return found, args[i + 1:]
        if not a.startswith("-") or a == "-":
            break
        for long, (short, takes_value) in spec.items():
            inline = None
            if a.startswith(long + "="):
                inline = a[len(long) + 1:]
            elif a not in (long, short):
                continue
            if inline is not None and not takes_value:
                raise UsageError(f"unknown option '{a}'")
            if takes_value:
                if inline is None:
                    if i + 1 >= len(args):
                        raise UsageError(f"option {long} needs a value")
                    i += 1
                    inline = args[i]
                found[long] = inline
            else:
                found[long] = True
            break
        else:
            raise UsageError(f"unknown option '{a}'")
        i += 1
    return found, args[i:]


def number(value):
    if not re.fullmatch(r"\s*[+-]?[0-9]+", value):
        raise UsageError(f"not a number: '{value}'")
    return int(value)


def text_command(args, transform):
    """TEXT from the arguments, else each line of standard input. transform returns (text, status)."""
    if args:
        out, status = transform(" ".join(args))
        write(out + "\n")
        return status
    data = read_stdin()
    lines = data.split("\n")
    if lines[-1] == "":
        lines.pop()
    status = 0
    out = []
    for line in lines:
        text, s = transform(line)
        out.append(text + "\n")
        status |= s
    write("".join(out))
    return status


def stdin_command(args):
    """For commands that read standard input: no TEXT allowed."""
    if args:
        raise UsageError(f"reads standard input; unexpected argument '{args[0]}'")
