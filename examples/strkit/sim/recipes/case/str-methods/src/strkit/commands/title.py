from ..cli import parse_options, text_command


def run(args):
    _, text = parse_options(args, {})
    return text_command(text, lambda s: (s.title(), 0))
