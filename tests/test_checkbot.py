"""`durak check-bot`: a conforming bot passes every variant; a misbehaving one fails with its reasons."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from clirun import invoke

from protocol.rules import Rules, RulesError
from referee.games.botargs import parse_bot_arg
from referee.games.checkbot import CheckReport, VariantCheck, format_report, rules_to_check

BOT = Path(__file__).parent / "hostile" / "bot.py"


def check(behaviour: str) -> tuple[int, str]:
    ran = invoke("check-bot", f"{sys.executable} -S {BOT} {behaviour}", "--move-time", "2")
    return ran.code, ran.output


def test_a_conforming_bot_passes_every_variant_in_every_seat() -> None:
    code, output = check("play")
    assert code == 0, output
    for variant in ("podkidnoy", "perevodnoy", "chase", "fools_fool"):
        for deck in (36, 52):
            assert f"ok   {variant:<11} {deck} cards  2 games, move median" in output
    assert output.rstrip().endswith("PASS")


def test_an_illegal_move_fails_the_check_with_the_reason() -> None:
    code, output = check("illegal after=2")
    assert code == 7
    assert "FAIL podkidnoy" in output and "illegal: illegal action" in output
    assert output.rstrip().endswith("FAIL: the bot misbehaved (see above)")


def test_a_bot_that_cannot_shake_hands_fails_at_once() -> None:
    code, output = check("bad_version")
    assert code == 7 and "FAIL handshake: protocol: the bot speaks protocol 99" in output


def test_a_missing_program_is_a_one_line_error() -> None:
    ran = invoke("check-bot", "no-such-bot-program")
    assert ran.code == 4 and "bot program 'no-such-bot-program' not found" in ran.output


def test_python_word_is_the_referees_interpreter_as_in_a_config() -> None:
    """``{python}`` means in check-bot and play what it means in a config's command (issue 37)."""
    assert parse_bot_arg("me={python} -S bot.py") == ("me", [sys.executable, "-S", "bot.py"])
    ran = invoke("check-bot", f"{{python}} -S {BOT} play", "--move-time", "2", "--variant", "podkidnoy",
                 "--deck", "36", "--games", "1")
    assert ran.code == 0 and ran.output.rstrip().endswith("PASS"), ran.output


def test_a_python_the_sandbox_does_not_show_is_refused_naming_the_python_word(tmp_path: Path) -> None:
    """A bot whose ``python3`` its sandbox does not find is told to write ``{python}`` (issue 37)."""
    ran = invoke("check-bot", f"python3 -S {BOT} play", "--env", f"PATH={tmp_path}")
    assert ran.code == 4 and "bot program 'python3' not found; write {python} for the referee's own interpreter (" \
        f"{sys.executable}), which every sandbox shows" in ran.output, ran.output
    ran = invoke("check-bot", "no-such-bot-program", "--env", f"PATH={tmp_path}")
    assert "{python}" not in ran.output  # only a Python is told about the referee's


def test_set_leaves_out_a_variant_that_lists_the_option_but_does_not_take_it_with_the_others() -> None:
    """chase lists transfer_beaten_pairs but takes it only with allow_transfer (RULES.md 5c): left out, not an
    abort (issue 25); with allow_transfer it is checked too, and a bad value still says what is wrong."""
    alone = rules_to_check([], [36], {"transfer_beaten_pairs": "discard"})
    assert [rules.variant for rules in alone] == ["perevodnoy"]
    both = rules_to_check([], [36], {"transfer_beaten_pairs": "discard", "allow_transfer": True})
    assert [rules.variant for rules in both] == ["chase"]  # perevodnoy always transfers: it has no such option
    with pytest.raises(RulesError, match="transfer_beaten_pairs"):
        rules_to_check([], [36], {"transfer_beaten_pairs": "sideways"})
    with pytest.raises(RulesError, match="no variant takes every option"):
        rules_to_check([], [36], {"transfer_after_beat": False, "allow_transfer": True})
    with pytest.raises(RulesError, match="does not apply to variant 'chase'"):  # a named variant is not left out
        rules_to_check(["chase"], [36], {"transfer_beaten_pairs": "discard"})


def test_strikes_are_listed_and_more_than_one_in_a_hundred_replies_fail_the_check() -> None:
    """Replies inside the grace are strikes: each is listed with its game and move, and more than 1% of the
    replies fail the check, since three in one tournament game are a timeout (issue 25). A 99th percentile past
    half the move time is warned of."""
    quick = [0.001] * 197 + [0.6, 0.65, 0.7]  # seconds: the slowest 1.5% past half of a 1 s move time
    check = VariantCheck(Rules(), games=2, move_times=quick, strikes=[("podkidnoy-36-s0-1", 7)])
    report = CheckReport("b", "1", 0.1, variants=[check], move_time=1.0)
    assert report.strike_count == 1 and report.replies == 200 and report.passed  # 0.5%: passes
    lines = format_report(report)
    assert "       strike: game podkidnoy-36-s0-1, move 7: replied after the move time, inside the grace" in lines
    assert lines[-3] == ("move times: median 1.00 ms, p99 600.00 ms, max 700.00 ms of the 1000 ms move time; "
                         "1 strike(s) in 200 replies")
    assert lines[-2].startswith("warning: the 99th percentile of the move times is 60% of the move time")
    assert lines[-1] == "PASS"
    check.strikes += [("podkidnoy-36-s1-1", 3), ("podkidnoy-36-s1-1", 9)]  # 1.5%
    assert not report.passed
    assert format_report(report)[-1] == "FAIL: 3 strike(s) in 200 replies, more than 1%: three in one game are a " \
                                        "timeout in a tournament"
    fast = CheckReport("b", "1", 0.1, variants=[VariantCheck(Rules(), games=2, move_times=[0.001] * 10)],
                       move_time=1.0)
    assert fast.passed and not any(line.startswith("warning") for line in format_report(fast))


ENV_BOT = """\
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        name = os.environ.get("BOT_NAME", "unset")
        print(json.dumps({"type": "hello", "protocol": m["protocol"], "name": name, "version": "1"}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
    elif m["type"] == "shutdown":
        break
"""


def test_check_bot_gives_the_bot_its_env_as_play_does_and_refuses_a_loader_variable(open_tmp: Path) -> None:
    """--env reaches the bot under the default sandbox (its handshake name comes from it), as in `durak play`;
    a variable the loader reads is refused before anything starts (issue 25)."""
    (open_tmp / "env_bot.py").write_text(ENV_BOT)
    command = f"{sys.executable} -S {open_tmp / 'env_bot.py'}"
    done = invoke("check-bot", command, "--variant", "podkidnoy", "--deck", "36", "--env", "BOT_NAME=from-env")
    assert done.code == 0 and done.output.startswith("bot 'from-env' version '1'"), done.output
    refused = invoke("check-bot", command, "--env", "LD_PRELOAD=/tmp/evil.so")
    assert refused.code == 2 and "'LD_PRELOAD' is refused" in refused.output
