import subprocess

import pytest


class Strkit:
    """Runs ./executable, the program under test, from the workspace root."""

    def __call__(self, *args, stdin=None):
        return subprocess.run(
            ["./executable", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=10,
        )


@pytest.fixture
def strkit():
    return Strkit()
