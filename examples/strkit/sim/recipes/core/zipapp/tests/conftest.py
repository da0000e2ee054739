"""Our tests run our ./executable and the reference side by side and compare them."""
import subprocess

import pytest


def run(program, args, stdin):
    r = subprocess.run([program, *args], input=stdin, capture_output=True, text=True, timeout=10)
    return r.returncode, r.stdout, r.stderr


class Compare:
    def __call__(self, *args, stdin=None):
        ours = run("./executable", args, stdin)
        reference = run("./reference/executable", args, stdin)
        assert ours == reference, f"strkit {' '.join(args)}: ours {ours!r}, reference {reference!r}"
        return ours


@pytest.fixture
def same():
    return Compare()
