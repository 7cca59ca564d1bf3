"""The options that several commands take, declared once as ``Annotated`` aliases, and the small parsers and
checks behind them."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from protocol.rules import VARIANTS, RulesError, parse_option_value
from referee.bots.sandbox.isolation import Level

SandboxOption = Annotated[Level | None, typer.Option(
    "--sandbox", help="Bot isolation: bwrap (default: bubblewrap with its own uid, cgroups, seccomp, private "
                      "files, no network), process (weaker, opt-in: no private files), or none (trusted bots). "
                      "See docs/ISOLATION.md.")]
PrivateOption = Annotated[bool, typer.Option(
    "--private", help="Put every bot's stderr in the report (the organizer's own copy: stderr is private to "
                      "its bot). Left out by default.")]
RootOption = Annotated[bool, typer.Option(
    "--bots-as-root", help="Trusted bots only: at the process level, run a bot as root (with a warning) where "
                           "its own uid cannot reach its files, instead of refusing it.")]
AllCoresOption = Annotated[bool, typer.Option(
    "--all-cores", help="Let the bots use every core of this machine. By default they are held to one core of "
                        "their own, as in a tournament, so that a bot is tested as it will play.")]
VariantArg = Annotated[str, typer.Option("--variant", "-v", help=f"One of {', '.join(VARIANTS)}.")]
HtmlOption = Annotated[str | None, typer.Option(
    "--html", help="Also write the replay viewer: one HTML page (mode 600) that works offline, cards drawn, "
                   "stepped with buttons or arrow keys.")]
SetOption = Annotated[list[str] | None, typer.Option("--set", help="A rule option, OPTION=VALUE (repeatable).")]
TournamentOption = Annotated[int | None, typer.Option(
    "--tournament", "-t", min=1, help="Which tournament of the database, by id (durak tournaments DB lists "
                                      "them); default: the active one, the latest.")]

# --- the options of a run (durak tournament and durak sprt) -----------------------------------------------

JobsOption = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, help="Games in parallel, each on a core of its own with its bots (default: one "
                                "per core; more than the cores warns).")]
DbOption = Annotated[str | None, typer.Option(
    "--db", help="The results database (default: next to CONFIG, CONFIG's stem + .db for a tournament, "
                 "+ -sprt.db for an SPRT).")]
FreshOption = Annotated[bool, typer.Option(
    "--fresh", help="Start a new tournament (or test) in the database, keeping the old.")]
RunSandboxOption = Annotated[Level | None, typer.Option(
    "--sandbox", help="Override the config's sandbox key: bwrap (default), process (weaker) or none.")]
SeedFileOption = Annotated[str | None, typer.Option(
    "--seed-file", help="A new tournament's (or test's) seed: a file holding one integer that only you can read (mode "
                        "600; others are refused). Default: drawn at the first run. Either way the database "
                        "keeps it (no config may hold it); durak seed DB prints it.")]
ChangedBotsOption = Annotated[Literal["replay", "keep"] | None, typer.Option(
    "--changed-bots", help="What to do with a bot whose command, env, files setting or files changed since "
                           "its stored games (refused without this): replay = play its stored games again "
                           "with the new version (the old ones kept as history, not rated); keep = keep "
                           "them rated. Either lifts its disqualification.")]
ClusterOption = Annotated[str | None, typer.Option(
    "--cluster", help="Play on a Dask cluster: its scheduler's address (tcp://HOST:8786, tls://...; default: "
                      "the config's cluster key, else this machine). Needs pip install -e '.[cluster]'; "
                      "docs/SCALING.md says how to set up the workers and why to use TLS.")]


def parse_set_options(pairs: list[str]) -> dict[str, object]:
    """``["first_bout_limit=5", ...]`` -> options; a missing ``=`` is a RulesError."""
    options: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise RulesError(f"--set takes OPTION=VALUE, not {pair!r}")
        options[name.strip()] = parse_option_value(value)
    return options

