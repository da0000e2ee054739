from ..cli import UsageError, number, parse_options, text_command


def run(args):
    opts, text = parse_options(args, {"--width": ("-w", True), "--align": ("-a", True), "--char": ("-c", True)})
    if "--width" not in opts:
        raise UsageError("needs --width N")
    width = number(opts["--width"])
    if width < 0:
        raise UsageError(f"width must not be negative, got '{opts['--width']}'")
    align = opts.get("--align", "left")
    if align not in ("left", "right", "center"):
        raise UsageError(f"bad alignment '{align}' (left, right or center)")
    char = opts.get("--char", " ")
    if len(char) != 1:
        raise UsageError(f"--char needs one character, got '{char}'")

    def pad(s):
        extra = max(0, width - len(s))
        before = extra if align == "right" else extra // 2 if align == "center" else 0
        return char * before + s + char * (extra - before), 0

    return text_command(text, pad)
