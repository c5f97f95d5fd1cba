"""The canrun command line as a user meets it: help, version, usage errors, exit codes."""
import re


def test_help_lists_usage_and_exit_codes(canrun):
    result = canrun("--help")
    assert result.returncode == 0
    assert "canrun" in result.stdout
    assert "--version" in result.stdout
    assert "Exit codes: 0 success, 1 a failed verdict or check, 2 bad usage or input" in result.stdout
    assert result.stderr == ""


def test_version_prints_semver(canrun):
    result = canrun("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"canrun \d+\.\d+\.\d+\n", result.stdout)


def test_unknown_command_exits_2_and_names_it(canrun):
    result = canrun("frobnicate")
    assert result.returncode == 2
    assert 'unknown command "frobnicate"' in result.stderr
    assert result.stdout == ""


def test_option_values_are_not_taken_for_commands(canrun):
    """campaign has a subcommand (status): the values of its options, after flags too, are
    values, and a misspelt subcommand is still named."""
    for args in (["--backend", "cpu"], ["--resume", "--retry", "failed"], ["--json", "--cores", "2"]):
        result = canrun("campaign", *args, "--out", "/nonexistent", "--executor", "bogus")
        assert result.returncode == 2 and "--executor: bogus not in" in result.stderr, args
    misspelt = canrun("campaign", "statuss", "x")
    assert misspelt.returncode == 2 and 'unknown command "campaign statuss"' in misspelt.stderr


def test_unknown_flag_exits_2_and_names_it(canrun):
    result = canrun("--no-such-flag")
    assert result.returncode == 2
    assert "--no-such-flag" in result.stderr


def test_no_command_prints_help_to_stderr_and_exits_2(canrun):
    result = canrun()
    assert result.returncode == 2
    assert "Usage" in result.stderr or "usage" in result.stderr.lower()


def test_hostile_command_name_is_not_echoed_raw(canrun):
    result = canrun("x\x1b[31mred")
    assert result.returncode == 2
    assert 'unknown command "x\\x1b[31mred"' in result.stderr
    assert "\x1b" not in result.stderr


def subcommands(help_text):
    """The subcommand names a help lists (its Subcommands: section)."""
    section = help_text.split("Subcommands:\n", 1)[1] if "Subcommands:\n" in help_text else ""
    return [line.split()[0] for line in section.splitlines()
            if line.startswith("  ") and not line.startswith("   ")]


def test_every_usage_line_names_the_whole_command(canrun):
    commands = [[name] for name in subcommands(canrun("--help").stdout)]
    assert ["test"] in commands and ["dataset"] in commands and ["help"] in commands
    seen = 0
    while commands:
        command = commands.pop()
        result = canrun(*command, "--help")
        assert result.returncode == 0, (command, result.stderr)
        usage = next(line for line in result.stdout.splitlines() if line.startswith("Usage:"))
        assert usage.startswith("Usage: canrun " + " ".join(command) + " "), usage
        commands += [command + [name] for name in subcommands(result.stdout)]
        seen += 1
    assert seen >= 20  # the subcommands of dataset, judge, cache, hub and campaign included


def test_help_command_prints_the_help_of_canrun_or_of_a_command(canrun):
    whole = canrun("help")
    assert whole.returncode == 0 and whole.stderr == ""
    assert whole.stdout == canrun("--help").stdout
    assert "canrun help COMMAND" in whole.stdout
    show = canrun("help", "dataset", "show")
    assert show.returncode == 0
    assert show.stdout == canrun("dataset", "show", "--help").stdout
    assert "Usage: canrun dataset show [OPTIONS] DIR" in show.stdout
    for words in (["frobnicate"], ["dataset", "frob"]):
        unknown = canrun("help", *words)
        assert unknown.returncode == 2 and unknown.stdout == ""
        assert f'unknown command "{" ".join(words)}"' in unknown.stderr
