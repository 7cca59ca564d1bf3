"""A crash's reason quotes the stderr line that states the error, not whatever came last (issue 25): the tails
below are what each runtime prints when it dies (the Go, Java, C++ and node ones as their runtimes print them);
tests/test_sample_bots_sandboxed.py crashes a sample bot of each language for real."""

from __future__ import annotations

import pytest

from referee.bots.stderr_log import StderrLog, error_statement

GO_PANIC = """\
panic: runtime error: index out of range [7] with length 6

goroutine 1 [running]:
main.bestAttack(...)
\t/home/me/gobot/main.go:330
main.main()
\t/home/me/gobot/main.go:412 +0x94e
exit status 2"""
GO_FATAL = """\
fatal error: all goroutines are asleep - deadlock!

goroutine 1 [chan receive]:
main.main()
\t/home/me/gobot/main.go:12 +0x2d"""
JAVA = """\
Exception in thread "main" java.lang.IllegalStateException: no legal action
\tat Bot.choose(Bot.java:88)
\tat Bot.main(Bot.java:30)
Caused by: java.lang.ArrayIndexOutOfBoundsException: Index 6 out of bounds for length 6
\tat Hand.get(Hand.java:14)
\t... 2 more"""
JAVA_UNCAUGHT = """\
Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()"
\tat Bot.main(Bot.java:30)"""
CPP = """\
terminate called after throwing an instance of 'std::out_of_range'
  what():  vector::_M_range_check: __n (which is 7) >= this->size() (which is 6)"""
PYTHON = """\
thinking about move 12
Traceback (most recent call last):
  File "/bot/bot.py", line 40, in <module>
    main()
  File "/bot/bot.py", line 31, in main
    raise ValueError("no card to beat 7H")
ValueError: no card to beat 7H
during handling, the bot printed this"""

NODE = """\
/home/me/jsbot/bot.js:86
        throw new TypeError('view.hand is undefined');
        ^

TypeError: view.hand is undefined
    at Interface.<anonymous> (/home/me/jsbot/bot.js:86:15)
    at Interface.emit (node:events:524:28)

Node.js v20.20.2"""


@pytest.mark.parametrize(("tail", "stated"), [
    (GO_PANIC, "panic: runtime error: index out of range [7] with length 6"),
    (GO_FATAL, "fatal error: all goroutines are asleep - deadlock!"),
    (JAVA, "Caused by: java.lang.ArrayIndexOutOfBoundsException: Index 6 out of bounds for length 6"),
    (JAVA_UNCAUGHT, 'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()"'),
    (CPP, "what():  vector::_M_range_check: __n (which is 7) >= this->size() (which is 6)"),
    (PYTHON, "ValueError: no card to beat 7H"),
    (NODE, "TypeError: view.hand is undefined"),
    ("starting\nbot.py: crashing on purpose\n\n", "bot.py: crashing on purpose"),  # no statement: the last line
], ids=["go-panic", "go-fatal", "java-cause", "java-uncaught", "cpp", "python", "node", "plain"])
def test_the_line_that_states_the_error_is_quoted(tail: str, stated: str) -> None:
    assert error_statement(tail.splitlines()) == stated
    log = StderrLog()
    log.append(tail.encode())
    assert log.error_line() == stated


def test_no_stderr_quotes_nothing() -> None:
    assert error_statement([]) is None and error_statement(["", "  "]) is None
    assert StderrLog().error_line() is None
