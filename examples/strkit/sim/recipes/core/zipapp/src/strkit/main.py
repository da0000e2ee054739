"""strkit's entry point: global options, and dispatch to strkit.commands.<name>."""
import importlib
import re
import sys

from .cli import UsageError

VERSION = "1.4.0"

USAGE = """usage: strkit COMMAND [OPTIONS] [TEXT...]

Text commands work on TEXT (the arguments joined by spaces) or, with no
arguments, on each line of standard input:
  upper        upper-case the text
  lower        lower-case the text
  title        upper-case the first letter of each word, lower-case the rest
  reverse      reverse the text
  rot13        rotate letters by 13 places
  caesar       shift letters: -s, --shift N (required)
  slug         turn the text into a URL slug
  palindrome   say yes or no (exit status 1 for no)
  pad          pad to a width: -w, --width N (required),
               -a, --align left|right|center, -c, --char C

Commands that read standard input:
  count        print the number of lines, words and bytes
  wrap         wrap words to a width: -w, --width N (default 40)
  freq         word frequencies: -n, --top N
  base64       encode; -d, --decode to decode

Other:
  roman        N as a Roman numeral; -d, --decode NUMERAL for the number
  --help       print this help
  --version    print the version
"""


def find(name):
    if not re.fullmatch(r"[a-z0-9]+", name):
        return None
    try:
        return importlib.import_module(f"strkit.commands.{name}")
    except ModuleNotFoundError:
        return None


def main():
    args = sys.argv[1:]
    if not args:
        sys.stderr.write("usage: strkit COMMAND [OPTIONS] [TEXT...]\ntry 'strkit --help'\n")
        sys.exit(2)
    name, rest = args[0], args[1:]
    if name in ("--help", "-h"):
        sys.stdout.write(USAGE)
        sys.exit(0)
    if name == "--version":
        sys.stdout.write(f"strkit {VERSION}\n")
        sys.exit(0)
    module = find(name)
    if module is None:
        sys.stderr.write(f"strkit: unknown command '{name}'\n")
        sys.exit(2)
    try:
        status = module.run(rest)
    except UsageError as e:
        sys.stderr.write(f"strkit: {name}: {e}\n")
        status = 2
    sys.stdout.flush()
    sys.exit(status)
