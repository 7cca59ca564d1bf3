"""``durak serve``: the web front of a league's database (pages and a JSON API), which reads games and writes only
requests (uploads, lifecycle actions) for the league daemon to carry out. Build it with :func:`create_app`."""

from referee.web.app import create_app
from referee.web.settings import WebSettings

__all__ = ["WebSettings", "create_app"]
