"""A Durak bot whose words are HTML and script injections (tests/test_report_browser.py).

    html_bot.py [illegal_after=N]

Its hello name and version, its stderr (at startup and at every request) and, after N requests (default:
never), an illegal action all carry markup that would run script if a page inserted it as HTML; each
sets ``window.pwned``. It plays the first legal action otherwise. Standard library only.
"""
import json
import sys

NAME = '<img src=x onerror="window.pwned=1">name'
VERSION = '1</script><script>window.pwned=2</script>'
STDERR = '<svg onload="window.pwned=3"></svg><b>bold?</b> \u2028</script>'
ACTION = '<img src=y onerror="window.pwned=4">'


def main() -> None:
    after = next((int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("illegal_after=")), None)
    asked = 0
    sys.stderr.write("startup " + STDERR + "\n")
    sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            reply = {"type": "hello", "protocol": message["protocol"], "name": NAME, "version": VERSION}
        elif kind == "request":
            asked += 1
            sys.stderr.write(f"request {asked} {STDERR}\n")
            sys.stderr.flush()
            text = ACTION if after is not None and asked > after else message["legal"][0]
            reply = {"type": "action", "id": message["id"], "action": text}
        elif kind == "shutdown":
            break
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
