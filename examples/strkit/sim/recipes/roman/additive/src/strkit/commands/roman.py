from ..cli import UsageError, fail, number, parse_options, write

DIGITS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


def to_roman(n):
    out = ""
    for value, digit in DIGITS:
        while n >= value:
            out += digit
            n -= value
    return out


def run(args):
    opts, rest = parse_options(args, {"--decode": ("-d", False)})
    decode = "--decode" in opts
    if not rest:
        raise UsageError("needs a numeral" if decode else "needs a number")
    if len(rest) > 1:
        raise UsageError(f"takes one argument, got '{rest[1]}' too")
    if not decode:
        n = number(rest[0])
        if not 1 <= n <= 3999:
            return fail("roman", "out of range (1-3999)")
        write(to_roman(n) + "\n")
        return 0
    for n in range(1, 4000):
        if to_roman(n) == rest[0].upper():
            write(f"{n}\n")
            return 0
    return fail("roman", f"not a roman numeral: '{rest[0]}'")
