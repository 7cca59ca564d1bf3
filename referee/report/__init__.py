"""What a person looks at: a self-contained HTML report of a tournament and a card-table replay viewer.

Data first, page second: :mod:`referee.report.steps` turns a stored replay into what the table shows after
each decision, :mod:`referee.report.game_data` and :mod:`referee.report.tournament_data` build the JSON the
pages embed, and :mod:`referee.report.page` inlines it with the assets (no network, works from ``file://``).
"""
