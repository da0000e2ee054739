from ..cli import parse_options, read_stdin, stdin_command, write


def run(args):
    _, rest = parse_options(args, {})
    stdin_command(rest)
    data = read_stdin()
    write(f"{len(data.splitlines())} {len(data.split())} {len(data)}\n")
    return 0
