import base64
import binascii
import sys

from ..cli import fail, parse_options, stdin_command


def run(args):
    opts, rest = parse_options(args, {"--decode": ("-d", False)})
    stdin_command(rest)
    data = sys.stdin.buffer.read()
    if "--decode" not in opts:
        sys.stdout.buffer.write(base64.b64encode(data) + b"\n")
        return 0
    try:
        decoded = base64.b64decode(b"".join(data.split()), validate=True)
    except binascii.Error:
        return fail("base64", "invalid input")
    sys.stdout.buffer.write(decoded)
    return 0
