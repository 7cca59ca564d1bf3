"""What the pages and the API both do on a signed-in viewer's behalf, one function each: the admin's lifecycle
requests and finals (the daemon carries them out) and the caps on an upload's archive. Who may call them is the
guard's to say (:mod:`referee.web.context`): these check what the request asks for."""

from __future__ import annotations

from litestar.exceptions import NotFoundException

from referee.league.finals import finalists, finals_problem
from referee.league.names import name_problem
from referee.results.requests import AskFinals, Payload, QuarantineBot, ReinstateBot, RetireBot
from referee.results.web_queries import WebStore
from referee.web import models
from referee.web.answers import Answers
from referee.web.refusals import NOT_FOUND, Refused

#: Lifecycle requests the admin may ask for from the web (the daemon carries them out), each the request it
#: writes. Quarantine is the gate's and the daemon's own verdict too; "reinstate" lifts it.
ADMIN_ACTIONS: dict[str, Payload] = {"retire": RetireBot(by="web"), "quarantine": QuarantineBot(by="web"),
                                     "reinstate": ReinstateBot(by="web")}
#: What an upload's raw body may be sent as (the daemon reads the archive itself, whatever it says it is).
ARCHIVE_TYPES = ("application/gzip", "application/zip", "application/octet-stream")
#: The most any upload route reads, whatever the settings (the configured archive cap is checked below it).
ARCHIVE_CEILING = 256 * 1024 * 1024


def queue_finals(store: WebStore, answers: Answers, asked: models.FinalsIn) -> models.RequestQueued:
    """A ``finals`` request, if the finals can begin (else 409, in the finals' own words)."""
    if store.finals(answers.league):
        raise Refused(409, "the finals have begun already")
    earlier = store.latest_request(answers.league.id, "finals")
    if earlier is not None and earlier.status == "pending":
        raise Refused(409, f"the finals were asked for already (request {earlier.id}, pending)")
    # The board as the daemon last fitted it: its rated lines only (an entered version is listed unrated, at the
    # pool's mean, until its first complete group; the finals' fit would not hold it).
    rated = [row.version for row in store.board(answers.league.id) if row.games > 0]
    problem = finals_problem(finalists(rated, answers.versions, asked.top))
    if problem is not None:
        raise Refused(409, problem)
    request_id = store.add_request(answers.league.id, "", AskFinals(top=asked.top, max_games=asked.max_games,
                                                                    by="web"))
    return models.RequestQueued(request=request_id, kind="finals", bot="")


def queue_action(store: WebStore, answers: Answers, action: str, bot: str) -> models.RequestQueued:
    """A lifecycle request for ``bot``, if the action is one and the bot exists (else 404)."""
    if action not in ADMIN_ACTIONS or name_problem(bot) is not None:
        raise NotFoundException(NOT_FOUND)
    if not any(v.bot == bot for v in answers.versions.values()):
        raise NotFoundException(NOT_FOUND)
    request_id = store.add_request(answers.league.id, bot, ADMIN_ACTIONS[action])
    return models.RequestQueued(request=request_id, kind=action, bot=bot)
