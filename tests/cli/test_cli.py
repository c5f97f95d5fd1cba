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
