"""``durak serve``: the web front of a league's database (pages and a JSON API), which reads games and writes only
requests (uploads, lifecycle actions) for the league daemon to carry out. Build it with
:func:`referee.web.app.create_app`. This package's root imports nothing, so the command line (which maps
:class:`referee.web.privileges.PrivilegeError` to its exit code) runs without the web extra installed."""
