"""One module per command: strkit.commands.<name> defines run(name, args) -> exit status."""
